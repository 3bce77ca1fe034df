//! What Gemini CLI carries only in its titles and call ids: the tool's name in the call id, a
//! shell command and its directory in the title (`CMD [in DIR] (DESCRIPTION)`).

use serde_json::{Map, Value};

/// Gemini CLI names a call `TOOL-MILLISECONDS` (`packages/cli/src/zed-integration`), newer
/// versions `TOOL-MILLISECONDS-COUNTER` (`packages/cli/src/acp/acpSession.ts`): its tool, when
/// the map knows it as Gemini CLI's, or an MCP tool (`mcp_SERVER_TOOL`).
pub(super) fn gemini_tool(call_id: &str) -> Option<String> {
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let (mut name, stamp) = call_id.rsplit_once('-')?;
    if !numeric(stamp) {
        return None;
    }
    if let Some((head, stamp)) = name.rsplit_once('-')
        && numeric(stamp)
    {
        name = head;
    }
    let known = name.starts_with("mcp_")
        || crate::policy::tools::find(name).is_some_and(|tool| tool.gemini.contains(&name));
    known.then(|| name.to_owned())
}

/// Characters that make text mean something to a shell beyond words and prose punctuation: a
/// part of a title that has one is never dropped.
const SHELL_SYNTAX: &[char] = &[
    ';', '&', '|', '<', '>', '$', '`', '\\', '{', '}', '\n', '\r', '*', '[', ']', '~', '=',
];

/// Words after which a `(` opens a subshell rather than a description: the title's last
/// parenthesised part then belongs to the command.
const BEFORE_SUBSHELL: &[&str] = &[
    "time", "-p", "--", "coproc", "then", "do", "else", "elif", "if", "while", "until", "!",
];

/// A shell tool's title split into the command and the directory it runs in. Gemini CLI titles
/// a command `CMD [in DIR] (DESCRIPTION)`; a suffix is dropped only when it cannot be part of
/// the command: the description does not follow an operator or a word that starts a subshell,
/// and neither it nor the directory contains shell syntax. Otherwise the whole title is the
/// command: the checker then sees more, never less.
pub(super) fn split_title(title: &str) -> (String, Option<String>) {
    let whole = (title.trim().to_owned(), None);
    let mut command = title.trim();
    let mut description = None;
    if let Some(open) = description_start(command) {
        description = Some(&command[open + 2..command.len() - 1]);
        command = command[..open].trim_end();
    }
    let mut dir = None;
    if let Some(open) = command.rfind(" [in ").filter(|_| command.ends_with(']')) {
        let named = &command[open + 5..command.len() - 1];
        if named.is_empty() || named.contains(SHELL_SYNTAX) || named.contains(['(', ')']) {
            return whole;
        }
        dir = Some(named.to_owned());
        command = command[..open].trim_end();
    }
    if let Some(description) = description {
        // After `[in DIR]` a `(` follows a plain word; otherwise look at the word before it.
        let previous = match dir {
            Some(_) => "]",
            None => command.rsplit(char::is_whitespace).next().unwrap_or(""),
        };
        let opens_subshell = command.is_empty()
            || dir.is_none() && previous.ends_with(SHELL_SYNTAX)
            || previous.ends_with(['(', ')', '!'])
            || BEFORE_SUBSHELL.contains(&previous)
            || command.split_whitespace().any(|w| w == "coproc");
        if opens_subshell || description.contains(SHELL_SYNTAX) {
            return whole;
        }
    }
    if command.is_empty() {
        return whole;
    }
    (command.to_owned(), dir)
}

/// Where a title's final parenthesised part starts (at its ` (`), if the title ends with one
/// whose parentheses balance.
fn description_start(title: &str) -> Option<usize> {
    if !title.ends_with(')') {
        return None;
    }
    let mut depth = 0usize;
    for (at, c) in title.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return (at > 0 && title[..at].ends_with(' ')).then(|| at - 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// The directory of newer Gemini CLI's explanation (`[in DIR] (DESCRIPTION)` in the content).
pub(super) fn dir_from_explanation(call: &Map<String, Value>) -> Option<String> {
    call.get("content")?
        .as_array()?
        .iter()
        .filter_map(|item| item.pointer("/content/text").and_then(Value::as_str))
        .find_map(|text| {
            let rest = text.trim_start().strip_prefix("[in ")?;
            let dir = &rest[..rest.find(']')?];
            (!dir.is_empty()).then(|| dir.to_owned())
        })
}
