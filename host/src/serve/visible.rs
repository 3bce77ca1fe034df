//! Text from a request as a reviewer reads it: every character that draws as nothing, or that
//! changes how the text around it is drawn, is shown as a visible escape (`⟨U+202E⟩`), so that
//! the command on the page (or in the webhook's message) is the command that runs. Without
//! this, `rm -rf ~/⟨U+202E⟩txt.sh` draws as `rm -rf ~/hs.txt`, and a zero-width space makes two
//! different commands look the same.

use std::borrow::Cow;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Whether `c` is hidden from a reader: controls (but the newline and the tab, which draw as
/// what they are), format characters (the bidirectional controls U+202A–U+202E, U+2066–U+2069,
/// U+200E, U+200F and U+061C; the zero-width U+200B–U+200D, U+2060–U+2064 and U+FEFF; the soft
/// hyphen; the tags U+E0000–U+E007F), line and paragraph separators, spaces other than the
/// space (a shell reads U+00A0 as part of a word), and the default-ignorable characters that
/// are none of those (variation selectors, the combining grapheme joiner, fillers).
pub fn hidden(c: char) -> bool {
    match c {
        '\n' | '\t' | ' ' => false,
        '\u{034F}'
        | '\u{115F}'..='\u{1160}'
        | '\u{17B4}'..='\u{17B5}'
        | '\u{180B}'..='\u{180F}'
        | '\u{2065}'
        | '\u{3164}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{FFA0}'
        | '\u{FFF0}'..='\u{FFF8}'
        | '\u{E0000}'..='\u{E0FFF}' => true,
        _ => matches!(
            c.general_category(),
            GeneralCategory::Control
                | GeneralCategory::Format
                | GeneralCategory::LineSeparator
                | GeneralCategory::ParagraphSeparator
                | GeneralCategory::SpaceSeparator
        ),
    }
}

/// Whether `text` holds a hidden character.
pub fn hides(text: &str) -> bool {
    text.chars().any(hidden)
}

/// Whether any text in `value` (its strings and keys, however deep) holds a hidden character:
/// the page and the webhook then say so.
pub fn anywhere(value: &impl serde::Serialize) -> bool {
    fn walk(value: &serde_json::Value) -> bool {
        match value {
            serde_json::Value::String(text) => hides(text),
            serde_json::Value::Array(items) => items.iter().any(walk),
            serde_json::Value::Object(map) => map.iter().any(|(key, v)| hides(key) || walk(v)),
            _ => false,
        }
    }
    serde_json::to_value(value).is_ok_and(|value| walk(&value))
}

/// The escape a hidden character is shown as.
fn escape(c: char) -> String {
    format!("⟨U+{:04X}⟩", u32::from(c))
}

/// `text` with each hidden character replaced by its escape (for plain text: the webhook).
pub fn plain(text: &str) -> Cow<'_, str> {
    if !hides(text) {
        return Cow::Borrowed(text);
    }
    Cow::Owned(
        text.chars()
            .map(|c| match hidden(c) {
                true => escape(c),
                false => c.to_string(),
            })
            .collect(),
    )
}

/// `text` with each escape [`plain`] writes (`⟨U+202E⟩`) read back as the character it
/// stands for: what a reviewer copies from the page, or leaves in a search box the page filled
/// in, finds the text the page showed.
pub fn unplain(text: &str) -> Cow<'_, str> {
    if !text.contains("⟨U+") {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("⟨U+") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "⟨U+".len()..];
        let escaped = after.split_once('⟩').and_then(|(hex, tail)| {
            let c = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32)?;
            (hex.len() <= 6).then_some((c, tail))
        });
        match escaped {
            Some((c, tail)) => {
                out.push(c);
                rest = tail;
            }
            None => {
                out.push_str("⟨U+");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// `text` as HTML: escaped, each hidden character drawn as its escape in a `<span class=hidden>`
/// (unquoted, so that the markup stays inert text where a template puts a value inside an
/// attribute: every quote of the text itself is escaped).
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(hidden) {
        let c = rest[at..].chars().next().expect("found at a character");
        out.push_str(&minijinja::HtmlEscape(&rest[..at]).to_string());
        out.push_str(&format!("<span class=hidden>{}</span>", escape(c)));
        rest = &rest[at + c.len_utf8()..];
    }
    out.push_str(&minijinja::HtmlEscape(rest).to_string());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_draws_as_nothing_or_reorders_is_hidden_and_what_draws_is_not() {
        let hidden_ones = concat!(
            "\u{202A}\u{202E}\u{2066}\u{2069}\u{200E}\u{200F}\u{061C}",
            "\u{200B}\u{200C}\u{200D}\u{2060}\u{2064}\u{FEFF}\u{00AD}\u{180E}",
            "\u{E0001}\u{E0041}\u{E007F}\u{FE0F}\u{E0100}\u{034F}\u{3164}",
            "\u{00A0}\u{3000}\u{2028}\u{0000}\r\u{1B}\u{7F}\u{85}",
        );
        for c in hidden_ones.chars() {
            assert!(hidden(c), "U+{:04X}", u32::from(c));
        }
        for c in "a \n\téж中→✓\u{0301}".chars() {
            assert!(!hidden(c), "U+{:04X}", u32::from(c));
        }
    }

    #[test]
    fn hidden_characters_are_shown_as_escapes_and_the_rest_is_escaped_html() {
        let spoof = "rm -rf ~/\u{202E}hs.txt";
        assert!(hides(spoof));
        assert_eq!(plain(spoof), "rm -rf ~/⟨U+202E⟩hs.txt");
        assert_eq!(plain("cargo test"), "cargo test");
        assert_eq!(unplain(&plain(spoof)), spoof);
        assert_eq!(
            unplain("⟨U+zz⟩ ⟨U+110000⟩ ⟨U+41"),
            "⟨U+zz⟩ ⟨U+110000⟩ ⟨U+41"
        );
        assert_eq!(
            html("<b>\"a\u{200B}b\"</b>"),
            "&lt;b&gt;&quot;a<span class=hidden>⟨U+200B⟩</span>b&quot;&lt;&#x2f;b&gt;"
        );
        assert_eq!(html("x\u{E0041}"), "x<span class=hidden>⟨U+E0041⟩</span>");
        assert!(anywhere(&serde_json::json!({"a": [1, {"b": "x\ry"}]})));
        assert!(anywhere(&serde_json::json!({"\u{2066}": 1})));
        assert!(!anywhere(&serde_json::json!({"a": ["cargo test", 2]})));
    }
}
