//! A plugin built for a WIT version this host does not implement (`acp-gate:plugin@0.2.0`).
wit_bindgen::generate!({
    inline: "
        package acp-gate:plugin@0.2.0;
        interface handler {
            evaluate: func(request: string) -> string;
        }
        world plugin {
            export handler;
        }
    ",
});

struct Future;

impl exports::acp_gate::plugin::handler::Guest for Future {
    fn evaluate(request: String) -> String {
        request
    }
}

export!(Future);
