//! The service's one error type: an HTTP status and a message that says what was wrong, sent
//! to API callers as `{"error": "..."}`; a failure inside (the database) is logged and sent as
//! a plain 500 without its details.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

#[derive(Debug)]
pub struct Refusal {
    pub status: StatusCode,
    pub message: String,
}

impl Refusal {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Refusal {
        Refusal {
            status,
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Refusal {
        Refusal::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn forbidden(message: impl Into<String>) -> Refusal {
        Refusal::new(StatusCode::FORBIDDEN, message)
    }

    pub fn not_found(message: impl Into<String>) -> Refusal {
        Refusal::new(StatusCode::NOT_FOUND, message)
    }

    pub fn conflict(message: impl Into<String>) -> Refusal {
        Refusal::new(StatusCode::CONFLICT, message)
    }
}

impl From<anyhow::Error> for Refusal {
    fn from(error: anyhow::Error) -> Refusal {
        eprintln!("acp-gate serve: {error:#}");
        Refusal::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the review service failed inside (see its log)",
        )
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        (self.status, axum::Json(json!({ "error": self.message }))).into_response()
    }
}
