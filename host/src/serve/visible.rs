//! Text from a request as a reviewer reads it: every character that draws as nothing, or that
//! changes how the text around it is drawn, is shown as a visible escape (`⟨U+202E⟩`), so that
//! the command on the page (or in the webhook's message) is the command that runs. Without
//! this, `rm -rf ~/⟨U+202E⟩txt.sh` draws as `rm -rf ~/hs.txt`, and a zero-width space makes two
//! different commands look the same.

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
}
