//! Lowercase hex, the one way spool writes bytes as text: digests in file names and
//! generations, random temp-file suffixes, uuids, and the index child's job lines.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// `b` as lowercase hex, into one buffer (an index job is tens of MB of it at 100k sessions,
/// so no `String` per byte).
pub fn encode(b: &[u8]) -> String {
    let mut out = String::with_capacity(2 * b.len());
    for x in b {
        out.push(DIGITS[usize::from(x >> 4)] as char);
        out.push(DIGITS[usize::from(x & 15)] as char);
    }
    out
}

/// The bytes `s` spells in hex (either case); `None` for an odd length or a non-hex digit.
pub fn decode(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    b.chunks(2)
        .map(|p| Some(nibble(p[0])? << 4 | nibble(p[1])?))
        .collect()
}

fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_high_nibble_first_in_lowercase() {
        assert_eq!(encode(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(encode(&[]), "");
    }

    #[test]
    fn decodes_what_it_encodes_and_refuses_what_is_not_hex() {
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(decode(&encode(&all)), Some(all));
        assert_eq!(decode("A5ff"), Some(vec![0xa5, 0xff]));
        assert_eq!(decode("abc"), None);
        assert_eq!(decode("0g"), None);
        assert_eq!(decode("+1"), None);
    }
}
