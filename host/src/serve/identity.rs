//! Who a name stands for, in the one form the service compares when it decides who may decide:
//! a reviewer never decides a request of their own, so `Alice`, ` alice`, `ＡＬＩＣＥ`
//! (fullwidth) and `ali\u{200B}ce` (a zero-width space inside) must all be alice. The form is
//! Unicode's NFKC (compatibility forms such as fullwidth letters and ligatures become the plain
//! ones), case folded (upper then lower case: `ß` and `SS`, `ς` and `σ` fold alike, which lower
//! case alone does not do), without the characters a reader cannot see
//! ([`visible::hidden`]) and without surrounding whitespace; a token name `PERSON@MACHINE`
//! stands for PERSON.

use unicode_normalization::UnicodeNormalization;

use super::visible;

/// The person `name` (a token's name, or the developer a gate names) stands for, normalised.
pub fn person(name: &str) -> String {
    let folded: String = name
        .nfkc()
        .collect::<String>()
        .to_uppercase()
        .to_lowercase();
    // NFKC again: case mapping can leave text that is not normalised (`İ` lowers to `i` and a
    // combining dot).
    let normal: String = folded
        .chars()
        .filter(|c| !visible::hidden(*c))
        .nfkc()
        .collect();
    let person = normal.split('@').next().unwrap_or_default();
    person.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_person_are_one_person() {
        let same_person = |a: &str, b: &str| person(a) == person(b);
        for spelling in [
            "alice",
            "Alice",
            "ALICE@laptop",
            " alice ",
            "\talice@ci",
            "ＡＬＩＣＥ",
            "ａｌｉｃｅ＠laptop",
            "ali\u{200B}ce",
            "\u{202E}alice",
            "alice\u{00A0}",
            "alice\u{FEFF}@laptop",
        ] {
            assert!(same_person(spelling, "alice@laptop"), "{spelling:?}");
        }
        assert!(same_person("STRASSE", "straße"));
        assert!(same_person("ΟΔΥΣΣΕΥΣ", "οδυσσευς"));
        for other in ["bob", "alice2", "al ice", "malice", ""] {
            assert!(!same_person(other, "alice@laptop"), "{other:?}");
        }
    }
}
