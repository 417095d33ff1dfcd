//! The letter pairs of a quick-search item's text: which letters it has and which pairs of
//! them side by side, so a text that cannot say a term is not read.

/// Which letters a lower-cased text has (26 bits) and which pairs of letters side by side
/// (230: one each for the common pairs, shared by the rest). A text without all of a term's
/// is not read: after a first letter, `fi` and `fix` re-checked 30-90k texts that did not
/// say them. For one letter or a common pair the bits are the answer (`exact`). 32 bytes a
/// row: a bit for every pair took 88 (8.8 MB kept at 100k sessions, issue 10); a rare pair
/// (`xq`) typed alone now reads the texts that have its shared bit.
#[derive(Clone, Copy, Default)]
pub(super) struct Pairs([u64; 4]);

/// Where the pairs' bits begin, after the single letters'.
const LETTERS: usize = 26;
/// How many bits the pairs have: one each for the `COMMON` pairs, the rest shared.
const PAIR_BITS: usize = 256 - LETTERS;

/// The pairs of letters most frequent in English, each with a bit of its own: `ti` and `fi`
/// match most rows at 100k sessions, and reading each text to confirm them cost 40% more
/// CPU a key. The other 476 pairs share the remaining bits.
const COMMON: &[u8; 400] = b"\
    thheineranreonatenndtiesorteofedisitalarsttontngsehaasouiolevecomedehiriroicneea\
    racelichllbemasiomurcaeltalansdifohopeecprnoctusacotiltrlyncetutsssorsunlowageie\
    wheewiemadolrtpowenaulnitsmoowpaimmiaishirsuidosiviaamficivipligtuevldrympfeblab\
    ghtyopwosaayexkefrooavagifapgrodbosprddoucbueiovbyrmepttocfaefcurnscgidayocrcldu\
    gaquueffbaeylsvaumppuauplugohtruugdsltpircrregauckewmubrbiptakpuuirgibtlnykirkys";

/// Each pair's bit among `PAIR_BITS` (`a * 26 + b`): its own for a `COMMON` pair, else one
/// of the shared ones, hashed.
const SLOT: [u8; 676] = slots();

const fn slots() -> [u8; 676] {
    let mut t = [u8::MAX; 676];
    let mut i = 0;
    while i < COMMON.len() / 2 {
        let pair = (COMMON[2 * i] - b'a') as usize * 26 + (COMMON[2 * i + 1] - b'a') as usize;
        assert!(t[pair] == u8::MAX, "a pair listed twice");
        t[pair] = i as u8;
        i += 1;
    }
    let own = COMMON.len() / 2;
    let mut p = 0;
    while p < 676 {
        if t[p] == u8::MAX {
            let h = (p as u32).wrapping_mul(0x9e37_79b1) as u64;
            t[p] = (own as u64 + ((h * (PAIR_BITS - own) as u64) >> 32)) as u8;
        }
        p += 1;
    }
    t
}

impl Pairs {
    pub(super) fn of(text: impl AsRef<[u8]>) -> Pairs {
        let mut p = Pairs::default();
        let mut prev = None;
        for &b in text.as_ref() {
            p.feed(&mut prev, b);
        }
        p
    }

    /// Take the next byte `b` of a text, `prev` the letter before it.
    pub(super) fn feed(&mut self, prev: &mut Option<usize>, b: u8) {
        let cur = letter(b);
        if let Some(c) = cur {
            self.set(c);
            if let Some(a) = *prev {
                self.set(LETTERS + SLOT[a * 26 + c] as usize);
            }
        }
        *prev = cur;
    }

    /// `feed` each of `bytes` in turn, the ASCII capitals read as their lower case with
    /// `fold` (a field the item reads from the row as written). Branch-free, through tables:
    /// the byte loop was about a quarter of building a warm start's 100k items, which the
    /// list is searchable after (issue 10), and `feed`'s branches went each way as letters
    /// and spaces came.
    pub(super) fn feed_all(&mut self, prev: &mut Option<usize>, bytes: &[u8], fold: bool) {
        let code = if fold { &FOLDED } else { &CODE };
        // A fifth word for `NOTHING`, the bit of a byte that sets none.
        let [a, b, c, d] = self.0;
        let mut w = [a, b, c, d, 0];
        let mut p = prev.unwrap_or(NOT_A_LETTER);
        for &byte in bytes {
            let cur = code[usize::from(byte)] as usize;
            let one = LETTER_BIT[cur] as usize;
            w[one >> 6] |= 1 << (one & 63);
            let two = PAIR_BIT[p * 27 + cur] as usize;
            w[two >> 6] |= 1 << (two & 63);
            p = cur;
        }
        self.0 = [w[0], w[1], w[2], w[3]];
        *prev = (p != NOT_A_LETTER).then_some(p);
    }

    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }

    /// Whether every pair and letter `need` has is here.
    pub(super) fn has_all(&self, need: &Pairs) -> bool {
        self.0.iter().zip(&need.0).all(|(a, b)| a & b == *b)
    }

    /// Whether `has_all` says exactly whether a lower-cased text contains `needle`: true for
    /// one lower-case ASCII letter, and for two that are a `COMMON` pair (a bit is set only
    /// by those bytes side by side); not for longer needles (`fix` is not in "fi ix"), the
    /// other pairs (they share bits) or other bytes.
    pub(super) fn exact(needle: &[u8]) -> bool {
        match needle {
            [a] => a.is_ascii_lowercase(),
            [a, b] => {
                let (Some(a), Some(b)) = (letter(*a), letter(*b)) else {
                    return false;
                };
                (SLOT[a * 26 + b] as usize) < COMMON.len() / 2
            }
            _ => false,
        }
    }
}

/// `feed_all`'s code of a byte that is not a letter.
const NOT_A_LETTER: usize = 26;
/// The bit `feed_all` sets for a byte that sets none: past the 256 a `Pairs` keeps.
const NOTHING: u16 = 256;
/// Each byte's letter (0-25 for `a`-`z`) or `NOT_A_LETTER`; `FOLDED` reads `A`-`Z` as
/// letters too.
const CODE: [u8; 256] = codes(false);
const FOLDED: [u8; 256] = codes(true);
/// The bit of each code's letter, `NOTHING` for `NOT_A_LETTER`.
const LETTER_BIT: [u16; 27] = letter_bits();
/// The bit of each pair of codes (`a * 27 + b`): its `SLOT` where both are letters, else
/// `NOTHING`.
const PAIR_BIT: [u16; 27 * 27] = pair_bits();

const fn codes(fold: bool) -> [u8; 256] {
    let mut t = [NOT_A_LETTER as u8; 256];
    let mut b = 0;
    while b < 26 {
        t[b'a' as usize + b] = b as u8;
        if fold {
            t[b'A' as usize + b] = b as u8;
        }
        b += 1;
    }
    t
}

const fn letter_bits() -> [u16; 27] {
    let mut t = [NOTHING; 27];
    let mut i = 0;
    while i < 26 {
        t[i] = i as u16;
        i += 1;
    }
    t
}

const fn pair_bits() -> [u16; 27 * 27] {
    let mut t = [NOTHING; 27 * 27];
    let mut a = 0;
    while a < 26 {
        let mut b = 0;
        while b < 26 {
            t[a * 27 + b] = (LETTERS + SLOT[a * 26 + b] as usize) as u16;
            b += 1;
        }
        a += 1;
    }
    t
}

fn letter(b: u8) -> Option<usize> {
    b.is_ascii_lowercase().then(|| (b - b'a') as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `feed_all` sets exactly the bits `feed` sets byte by byte (the capitals lower-cased
    /// first where it folds), and hands on the same last letter, over texts of letters,
    /// capitals, spaces, punctuation and bytes past ASCII, fed in pieces as a row's fields
    /// are.
    #[test]
    fn feeding_all_at_once_is_feeding_each_byte() {
        let alphabet: &[u8] = b"abcxyzQRSTZ \n-_0179\xc3\xa9\xff";
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..2000 {
            let len = (next() % 40) as usize;
            let text: Vec<u8> = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            let cut = (next() % (len as u64 + 1)) as usize;
            let fold = round % 2 == 0;
            let (mut one, mut all) = (Pairs::default(), Pairs::default());
            let (mut p1, mut p2) = (None, None);
            for piece in [&text[..cut], &text[cut..]] {
                for &b in piece {
                    one.feed(&mut p1, if fold { b.to_ascii_lowercase() } else { b });
                }
                all.feed_all(&mut p2, piece, fold);
            }
            assert_eq!(
                (one.0, p1),
                (all.0, p2),
                "{:?} fold {fold}",
                String::from_utf8_lossy(&text)
            );
        }
    }
}
