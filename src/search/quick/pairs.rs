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

fn letter(b: u8) -> Option<usize> {
    b.is_ascii_lowercase().then(|| (b - b'a') as usize)
}
