//! Path spellings that this Linux-minded validator cannot judge, and characters it refuses.

/// Why `raw` is not a plain POSIX path, if it is a Windows form: drive letters, `\\?\` and
/// UNC prefixes, backslashes, alternate data streams, trailing dots or spaces, 8.3 short names.
pub fn foreign_form(raw: &str) -> Option<&'static str> {
    let bytes = raw.as_bytes();
    if raw.starts_with(r"\\?\") || raw.starts_with(r"\\.\") || raw.starts_with(r"\??\") {
        return Some("a Windows device or extended-length path");
    }
    if raw.starts_with(r"\\") {
        return Some("a Windows network (UNC) path");
    }
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Some("a Windows drive path");
    }
    if raw.contains('\\') {
        return Some("a path with backslashes");
    }
    for component in raw
        .split('/')
        .filter(|c| !c.is_empty() && *c != "." && *c != "..")
    {
        if component.contains(':') {
            return Some("a colon in a file name (a Windows alternate data stream)");
        }
        if component.ends_with('.') || component.ends_with(' ') {
            return Some("a file name ending in a dot or space (Windows drops them)");
        }
        if is_short_name(component) {
            return Some("a Windows 8.3 short name");
        }
    }
    None
}

/// `PROGRA~1`, `SECRET~2.TXT`: up to six characters, `~`, a digit.
fn is_short_name(component: &str) -> bool {
    let stem = component.split('.').next().unwrap_or(component);
    match stem.rsplit_once('~') {
        Some((head, digits)) => {
            !head.is_empty()
                && head.len() <= 6
                && !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

/// Why `raw` is refused outright: NUL and other control characters, which no legitimate tool
/// call puts in a path and which terminals and logs render misleadingly.
pub fn control_characters(raw: &str) -> Option<&'static str> {
    if raw.contains('\0') {
        return Some("a NUL byte");
    }
    if raw.chars().any(|c| c.is_control()) {
        return Some("a control character");
    }
    if raw.chars().any(|c| matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')) {
        return Some("an invisible or direction-changing Unicode character");
    }
    None
}

/// Whether `path` is absolute with no `.` or `..` component (what the host promises).
pub fn is_normalised(path: &str) -> bool {
    path.starts_with('/') && !path.split('/').any(|c| c == "." || c == "..")
}
