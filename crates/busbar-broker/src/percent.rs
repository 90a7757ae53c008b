//! Percent-encoding (RFC 3986) for addresses and SAS tokens: decoding any case, encoding in upper case.

/// Decodes `%XX` escapes (either hex case); `+` stays a plus sign. `None` when an escape is cut
/// short, is not hex, or the result is not UTF-8.
pub(crate) fn decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut rest = bytes;
    while let Some((&byte, tail)) = rest.split_first() {
        if byte == b'%' {
            let [high, low, after @ ..] = tail else {
                return None;
            };
            out.push(hex_value(*high)? << 4 | hex_value(*low)?);
            rest = after;
        } else {
            out.push(byte);
            rest = tail;
        }
    }
    String::from_utf8(out).ok()
}

/// Encodes every byte outside RFC 3986's unreserved set (`A-Z a-z 0-9 - . _ ~`) as `%XX` with
/// upper-case hex, the form Python's `quote_plus` and JavaScript's `encodeURIComponent` give for
/// audiences (they differ only on characters that never occur in Service Bus addresses).
pub(crate) fn encode(text: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push('%');
            out.push(char::from(HEX[usize::from(byte >> 4)]));
            out.push(char::from(HEX[usize::from(byte & 0x0f)]));
        }
    }
    out
}

fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_either_case_and_leaves_plain_text_alone() {
        assert_eq!(
            decode("sb%3A%2F%2Flocalhost").as_deref(),
            Some("sb://localhost")
        );
        assert_eq!(
            decode("sb%3a%2f%2flocalhost").as_deref(),
            Some("sb://localhost")
        );
        assert_eq!(decode("a+b").as_deref(), Some("a+b"));
        assert_eq!(decode("%C3%A9").as_deref(), Some("é"));
        assert_eq!(decode("").as_deref(), Some(""));
    }

    #[test]
    fn refuses_broken_escapes() {
        for bad in ["%", "%4", "abc%", "%G1", "%1G", "%FF"] {
            assert_eq!(decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn encodes_reserved_bytes_upper_case_and_round_trips() {
        let audience = "sb://localhost:5673/q-basic";
        assert_eq!(encode(audience), "sb%3A%2F%2Flocalhost%3A5673%2Fq-basic");
        assert_eq!(encode("a b~é"), "a%20b~%C3%A9");
        assert_eq!(decode(&encode(audience)).as_deref(), Some(audience));
    }
}
