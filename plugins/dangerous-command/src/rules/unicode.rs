//! Invisible and look-alike characters in a command's words.

use crate::judgement::Findings;

pub(crate) fn check(f: &mut Findings) {
    let inv = f.inv;
    for (i, a) in inv.argv.iter().enumerate() {
        if a.text.is_ascii() {
            continue;
        }
        let suspicious = a.text.chars().any(is_deceptive_char)
            || (i == 0 || a.text.starts_with('-'))
            || mixes_scripts(&a.text);
        if suspicious {
            f.ask(
                "unicode-confusable",
                format!(
                    "the word `{}` has invisible or look-alike characters",
                    a.text.escape_unicode_deceptive()
                ),
            );
            return;
        }
    }
}

/// Zero-width, bidirectional-control, non-ASCII space and dash-like characters.
pub fn is_deceptive_char(c: char) -> bool {
    matches!(c,
        '\u{00A0}' | '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{1680}' | '\u{17B4}' | '\u{17B5}' | '\u{180E}'
        | '\u{2000}'..='\u{200F}' | '\u{2010}'..='\u{2015}' | '\u{2028}'..='\u{202F}' | '\u{205F}'..='\u{206F}' | '\u{2212}'
        | '\u{3000}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FF00}'..='\u{FFEF}' | '\u{E0000}'..='\u{E007F}')
}

/// Latin letters mixed with Cyrillic, Greek or Armenian ones in one word (`rm` with a Cyrillic `м`).
pub(crate) fn mixes_scripts(word: &str) -> bool {
    let latin = word.chars().any(|c| c.is_ascii_alphabetic());
    let lookalike = word.chars().any(|c| matches!(c, '\u{0370}'..='\u{03FF}' | '\u{0400}'..='\u{052F}' | '\u{0530}'..='\u{058F}' | '\u{1D00}'..='\u{1DBF}'));
    latin && lookalike
}

trait EscapeDeceptive {
    fn escape_unicode_deceptive(&self) -> String;
}

impl EscapeDeceptive for String {
    fn escape_unicode_deceptive(&self) -> String {
        self.chars()
            .map(|c| {
                if is_deceptive_char(c) {
                    format!("\\u{{{:04X}}}", c as u32)
                } else {
                    c.to_string()
                }
            })
            .collect()
    }
}
