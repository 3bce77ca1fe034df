// A domain allow-list for fetches: an acp-gate plugin in JavaScript (componentize-qjs).
//
// - A `fetch` request (an agent's WebFetch / fetch tool): the URL comes from the tool's
//   `rawInput.url`, else from the title. An allowed host is allowed; any other host gets the
//   configured `unlisted` verdict. A fetch that names no URL (a web search) is left to the chain.
// - An `execute` request whose command runs `curl` or `wget` (also inside `bash -c '...'`,
//   pipelines and `$( )`): every `scheme://` URL on the command line must be allowed; a download
//   whose host cannot be told (no `scheme://` URL) gets the `unlisted` verdict too.
// - Everything else: abstain.
//
// Config (the handler's [handler.config], delivered as JSON):
//   allow    = ["docs.rs", "*.python.org"]  // exact hosts; "*.example.com" = any subdomain
//   unlisted = "ask"                        // or "deny" [default "ask"]
//   commands = ["curl", "wget"]             // download commands to watch [default]

import log from "acp-gate:plugin/log@0.1.0";

const KNOWN_KEYS = ["allow", "unlisted", "commands"];

function parseConfig(text) {
  const config = JSON.parse(text);
  for (const key of Object.keys(config)) {
    if (!KNOWN_KEYS.includes(key)) throw `invalid [handler.config]: unknown key \`${key}\``;
  }
  const allow = (config.allow ?? []).map((d) => String(d).toLowerCase());
  const unlisted = config.unlisted ?? "ask";
  if (unlisted !== "ask" && unlisted !== "deny") {
    throw `invalid [handler.config]: unlisted = \`${unlisted}\`, expected "ask" or "deny"`;
  }
  const commands = config.commands ?? ["curl", "wget"];
  return { allow, unlisted, commands };
}

// "https://user@Docs.RS:443/x" -> "docs.rs"; null when `url` has no scheme.
function hostOf(url) {
  const match = /^[a-z][a-z0-9+.-]*:\/\/([^/?#\s]*)/i.exec(url);
  if (!match) return null;
  let host = match[1].slice(match[1].lastIndexOf("@") + 1);
  if (host.startsWith("[")) return host.slice(0, host.indexOf("]") + 1).toLowerCase();
  return host.replace(/:\d*$/, "").replace(/\.$/, "").toLowerCase();
}

function allowed(host, allow) {
  return allow.some((entry) =>
    entry.startsWith("*.") ? host.endsWith(entry.slice(1)) : host === entry,
  );
}

function urlsIn(text) {
  return text.match(/[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>()]+/gi) ?? [];
}

function unlistedVerdict(config, reason) {
  return config.unlisted === "deny" ? { tag: "deny", val: reason } : { tag: "ask", val: reason };
}

// Judges a set of URLs: allow when every host is on the list.
function judgeUrls(urls, config, what) {
  for (const url of urls) {
    const host = hostOf(url);
    if (host === null || !allowed(host, config.allow)) {
      return unlistedVerdict(
        config,
        `${what} ${url}: ${host ?? "this host"} is not on the domain allow-list`,
      );
    }
  }
  log.write("debug", `${what}: every host is on the allow-list`);
  return { tag: "allow" };
}

function judgeFetch(request, config) {
  let url = null;
  try {
    const input = JSON.parse(request.rawJson)?.toolCall?.rawInput;
    if (input && typeof input.url === "string") url = input.url;
  } catch (_) {
    // raw-json is always JSON from the host; a fetch without it falls back to the title.
  }
  const urls = url !== null ? [url] : urlsIn(request.title);
  if (urls.length === 0) return { tag: "abstain" };
  return judgeUrls(urls, config, "fetch of");
}

function words(command) {
  if (command.argv) return command.argv.flatMap((arg) => arg.split(/[\s;|&()`$]+/));
  return (command.shell ?? "").replace(/["'\\]/g, " ").split(/[\s;|&()`$<>]+/);
}

function judgeCommand(request, config) {
  const list = words(request.command).filter((w) => w.length > 0);
  const tools = list.filter((w) => config.commands.includes(w.slice(w.lastIndexOf("/") + 1)));
  if (tools.length === 0) return { tag: "abstain" };
  const urls = list.filter((w) => w.includes("://"));
  if (urls.length === 0) {
    return unlistedVerdict(
      config,
      `${tools[0]} without a scheme://URL: cannot tell which host it contacts`,
    );
  }
  return judgeUrls(urls, config, `${tools[0]}`);
}

export const handler = {
  evaluate(request, configText) {
    const config = parseConfig(configText);
    if (request.kind === "fetch") return judgeFetch(request, config);
    if (request.kind === "execute" && request.command) return judgeCommand(request, config);
    return { tag: "abstain" };
  },
};
