//! The plugin side of the WIT contract: the bindings, the [`Plugin`] and [`Prepare`] traits and
//! their exports, test requests and logging. Built with the `bindings` feature (the default);
//! the host reads the shared tables (`sensitive`, `tools`) without it.

/// The bindings generated from `wit/plugin.wit`, for its `prepared-plugin` world: every plugin
/// built with this crate exports `prepare` (one that keeps nothing unless it implements
/// [`Prepare`]). Plugins rarely need them directly.
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "prepared-plugin",
        pub_export_macro: true,
        export_macro_name: "__export_plugin_world",
        default_bindings_module: "acp_gate_plugin::bindings",
    });
}

pub use bindings::acp_gate::plugin::paths::{PatchChange, PatchedFile, Resolution};
pub use bindings::acp_gate::plugin::types::{
    Access, CommandLine, Diff, OptionKind, PathRef, PermissionOption, Request, RequestSource,
    ToolKind, Verdict,
};
pub use bindings::exports::acp_gate::plugin::prepare::{Interest, Places, Preparation};

impl PathRef {
    /// Whether the request reads only the names at and under this path (a directory listing,
    /// a file glob's matches), not any file's contents: the host marks such a path's `origin`
    /// with `listing:`.
    pub fn lists_names(&self) -> bool {
        self.origin.starts_with("listing:")
    }

    /// Whether the request reads this file without naming it, and only if no ignore file
    /// excludes it (a recursive search over its directory): `origin` starts with `reach:`.
    pub fn may_be_read(&self) -> bool {
        self.origin.starts_with("reach:")
    }
}

impl ToolKind {
    /// The kind's name as ACP and `handlers.toml` write it (`switch_mode`, not WIT's
    /// `switch-mode`).
    pub fn acp_name(self) -> &'static str {
        match self {
            ToolKind::Read => "read",
            ToolKind::Edit => "edit",
            ToolKind::Delete => "delete",
            ToolKind::Move => "move",
            ToolKind::Search => "search",
            ToolKind::Execute => "execute",
            ToolKind::Think => "think",
            ToolKind::Fetch => "fetch",
            ToolKind::SwitchMode => "switch_mode",
            ToolKind::Other => "other",
        }
    }
}

/// A permission plugin: one pure function from a request and its config to a verdict.
pub trait Plugin {
    /// The plugin's `[handler.config]` table. `{}` is passed when the table is absent, so
    /// most configs derive `Default` and use `#[serde(default)]`.
    type Config: serde::de::DeserializeOwned;

    /// Judge one request. Return `Err` when the request cannot be judged; the host applies
    /// the handler's `on_error` verdict.
    fn evaluate(request: &Request, config: &Self::Config) -> Result<Verdict, String>;

    /// Which requests the plugin can have an opinion on with `config`: acp-gate does not run
    /// it on others (they count as abstain). Declare only what `evaluate` guarantees: a
    /// request outside the interest must get `Abstain`, whatever it holds. Default: any.
    fn interest(_config: &Self::Config) -> Interest {
        Interest::ANY
    }
}

impl Interest {
    /// Any request.
    pub const ANY: Interest = Interest {
        kinds: None,
        paths: false,
    };
    /// No request at all: the plugin abstains on everything.
    pub const NONE: Interest = Interest {
        kinds: Some(Vec::new()),
        paths: false,
    };
}

/// `config` as `P`'s config type, or the error the host shows.
fn parse<P: Plugin>(config: &str) -> Result<P::Config, String> {
    serde_json::from_str(config).map_err(|e| format!("invalid [handler.config]: {e}"))
}

/// Parses `config` and calls `P::evaluate`; what [`export_plugin!`] wires to the export.
pub fn evaluate_with<P: Plugin>(request: &Request, config: &str) -> Result<Verdict, String> {
    P::evaluate(request, &parse::<P>(config)?)
}

/// Parses `config` (a broken one stops the handler at load) and declares `P`'s interest,
/// keeping nothing; what [`export_plugin!`] wires to the `prepare` export.
pub fn interest_with<P: Plugin>(config: &str) -> Result<Preparation, String> {
    Ok(Preparation {
        ready: false,
        interest: P::interest(&parse::<P>(config)?),
    })
}

/// A plugin whose config is worth turning into a ready state once per load (compiled rules,
/// checked examples) instead of once per request: the host snapshots the instance after
/// [`Prepare::prepare`], and each request's fresh instance starts from that memory and is
/// asked [`Prepare::evaluate_ready`]. Export it with [`export_prepared_plugin!`].
pub trait Prepare: Plugin {
    /// What a config becomes. It lives in the snapshot's memory for the instance's life.
    type Ready: Send + Sync + 'static;

    /// Makes the ready state, for requests that will most likely have `places`. `Ok(None)`:
    /// with this config the plugin abstains on every request (acp-gate then never runs it).
    /// `Err`: the config is broken; the handler does not load.
    fn prepare(config: &Self::Config, places: &Places) -> Result<Option<Self::Ready>, String>;

    /// Judges `request` from the ready state. It must decide as [`Plugin::evaluate`] would
    /// with the prepared config, whatever the request's places (redo what depends on them when
    /// they are not the prepared ones).
    fn evaluate_ready(request: &Request, ready: &Self::Ready) -> Result<Verdict, String>;
}

/// The ready state prepared in this instance's memory (in the snapshot acp-gate makes of it).
pub type Prepared<P> = std::sync::OnceLock<<P as Prepare>::Ready>;

/// Parses `config`, calls `P::prepare` and keeps what it made in `cell`; what
/// [`export_prepared_plugin!`] wires to the `prepare` export.
pub fn prepare_with<P: Prepare>(
    cell: &Prepared<P>,
    config: &str,
    places: &Places,
) -> Result<Preparation, String> {
    let parsed = parse::<P>(config)?;
    let Some(ready) = P::prepare(&parsed, places)? else {
        return Ok(Preparation {
            ready: false,
            interest: Interest::NONE,
        });
    };
    Ok(Preparation {
        ready: cell.set(ready).is_ok(),
        interest: P::interest(&parsed),
    })
}

/// Judges `request` from the ready state in `cell`; what [`export_prepared_plugin!`] wires to
/// the `judge` export. An error when nothing was prepared.
pub fn judge_with<P: Prepare>(cell: &Prepared<P>, request: &Request) -> Result<Verdict, String> {
    let ready = cell
        .get()
        .ok_or("`judge` called on an instance that was not prepared")?;
    P::evaluate_ready(request, ready)
}

/// Exports a [`Plugin`] implementation as the component's `handler` interface, and a
/// `prepare` that keeps nothing and declares [`Plugin::interest`].
#[macro_export]
macro_rules! export_plugin {
    ($plugin:ty) => {
        $crate::export_plugin!(@world $plugin,
            |config, _places| $crate::interest_with::<$plugin>(config),
            |_request| ::std::result::Result::Err("this plugin prepares nothing".into())
        );
    };
    (@world $plugin:ty, $prepare:expr, $judge:expr) => {
        #[doc(hidden)]
        pub struct __AcpGateExport;

        impl $crate::bindings::exports::acp_gate::plugin::handler::Guest for __AcpGateExport {
            fn evaluate(
                request: $crate::Request,
                config: ::std::string::String,
            ) -> ::std::result::Result<$crate::Verdict, ::std::string::String> {
                $crate::evaluate_with::<$plugin>(&request, &config)
            }
        }

        impl $crate::bindings::exports::acp_gate::plugin::prepare::Guest for __AcpGateExport {
            fn prepare(
                config: ::std::string::String,
                places: $crate::Places,
            ) -> ::std::result::Result<$crate::Preparation, ::std::string::String> {
                let prepare: fn(&str, &$crate::Places) -> _ = $prepare;
                prepare(&config, &places)
            }

            fn judge(
                request: $crate::Request,
            ) -> ::std::result::Result<$crate::Verdict, ::std::string::String> {
                let judge: fn(&$crate::Request) -> _ = $judge;
                judge(&request)
            }
        }

        // Only a wasm build exports the world: natively (unit tests of the plugin's logic) the
        // canonical-ABI exports do not link into a cdylib.
        #[cfg(target_arch = "wasm32")]
        $crate::bindings::__export_plugin_world!(__AcpGateExport with_types_in $crate::bindings);
    };
}

/// Exports a [`Prepare`] implementation as the component's `handler` and `prepare` interfaces.
#[macro_export]
macro_rules! export_prepared_plugin {
    ($plugin:ty) => {
        #[doc(hidden)]
        static __ACP_GATE_READY: $crate::Prepared<$plugin> = ::std::sync::OnceLock::new();

        $crate::export_plugin!(@world $plugin,
            |config, places| $crate::prepare_with::<$plugin>(&__ACP_GATE_READY, config, places),
            |request| $crate::judge_with::<$plugin>(&__ACP_GATE_READY, request)
        );
    };
}

/// Requests for a plugin's native unit tests: an `execute` request in [`testing::WORKSPACE`]
/// with [`testing::HOME`], for a shell string, an argv, or paths.
pub mod testing {
    use crate::{Access, CommandLine, PathRef, Request, RequestSource, ToolKind};

    pub const HOME: &str = "/home/user";
    pub const WORKSPACE: &str = "/work/project";

    /// An `execute` request for a shell string, in `WORKSPACE`, with `HOME`.
    pub fn request(shell: &str) -> Request {
        Request {
            session_id: "s".into(),
            tool_call_id: "t".into(),
            title: shell.into(),
            kind: ToolKind::Execute,
            declared_kind: None,
            tool_name: None,
            source: RequestSource::PermissionRequest,
            command: Some(CommandLine {
                argv: None,
                shell: Some(shell.into()),
            }),
            paths: Vec::new(),
            diffs: Vec::new(),
            cwd: WORKSPACE.into(),
            workspace_roots: vec![WORKSPACE.into()],
            home_dir: HOME.into(),
            options: Vec::new(),
            received_at_ms: 0,
            raw_json: "{}".into(),
        }
    }

    /// The same for an argv.
    pub fn argv_request(argv: &[&str]) -> Request {
        let mut r = request("");
        r.command = Some(CommandLine {
            argv: Some(argv.iter().map(|s| s.to_string()).collect()),
            shell: None,
        });
        r
    }

    /// A request of `kind` touching absolute `paths`, with no command.
    pub fn path_request(kind: ToolKind, paths: &[&str]) -> Request {
        let mut r = request("");
        r.kind = kind;
        r.command = None;
        r.title = format!("{kind:?} {}", paths.join(" "));
        r.paths = paths
            .iter()
            .map(|p| PathRef {
                raw: p.to_string(),
                absolute: p.to_string(),
                access: if kind == ToolKind::Read {
                    Access::Read
                } else {
                    Access::Write
                },
                origin: "locations".into(),
            })
            .collect();
        r
    }
}

/// Messages into the host's log (requires the `log` grant, which every plugin has by default).
pub mod log {
    use crate::bindings::acp_gate::plugin::log::{Level, write};

    pub fn debug(message: &str) {
        write(Level::Debug, message);
    }
    pub fn info(message: &str) {
        write(Level::Info, message);
    }
    pub fn warn(message: &str) {
        write(Level::Warn, message);
    }
}

/// Resolves a path on the host, symlinks included (requires the `paths` grant).
pub fn resolve_path(path: &str) -> Resolution {
    bindings::acp_gate::plugin::paths::resolve(path)
}

/// The names in a directory on the host, sorted (requires the `paths` grant).
pub fn dir_entries(dir: &str) -> Result<Vec<String>, String> {
    bindings::acp_gate::plugin::paths::entries(dir)
}

/// The files a patch file on the host changes, as its headers name them (requires the `paths`
/// grant).
pub fn patch_files(file: &str) -> Result<Vec<PatchedFile>, String> {
    bindings::acp_gate::plugin::paths::patch_files(file)
}
