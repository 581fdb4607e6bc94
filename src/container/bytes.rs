//! Bounded reads of fixed-width integers at an offset: `None` past the end,
//! never a panic. Every header and record the container and Bun layers
//! decode (payload lengths, `Offsets`, module records, Mach-O and PE
//! headers, signature blobs) is read through these.

/// `b[at..at + N]` as an array, checked.
fn array<const N: usize>(b: &[u8], at: usize) -> Option<[u8; N]> {
    b.get(at..at.checked_add(N)?)?.try_into().ok()
}

pub(crate) fn le16(b: &[u8], at: usize) -> Option<u16> {
    array(b, at).map(u16::from_le_bytes)
}

pub(crate) fn le32(b: &[u8], at: usize) -> Option<u32> {
    array(b, at).map(u32::from_le_bytes)
}

pub(crate) fn le64(b: &[u8], at: usize) -> Option<u64> {
    array(b, at).map(u64::from_le_bytes)
}

pub(crate) fn be32(b: &[u8], at: usize) -> Option<u32> {
    array(b, at).map(u32::from_be_bytes)
}

pub(crate) fn be64(b: &[u8], at: usize) -> Option<u64> {
    array(b, at).map(u64::from_be_bytes)
}

/// `b[at..at + len]`, checked.
pub(crate) fn slice(b: &[u8], at: usize, len: usize) -> Option<&[u8]> {
    b.get(at..at.checked_add(len)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_are_bounded_and_ordered() {
        let b = [1u8, 2, 3, 4, 5, 6, 7, 8, 9];
        assert_eq!(le16(&b, 0), Some(0x0201));
        assert_eq!(le32(&b, 1), Some(0x0504_0302));
        assert_eq!(le64(&b, 1), Some(0x0908_0706_0504_0302));
        assert_eq!(be32(&b, 0), Some(0x0102_0304));
        assert_eq!(be64(&b, 0), Some(0x0102_0304_0506_0708));
        assert_eq!(le32(&b, 6), None);
        assert_eq!(le64(&b, 2), None);
        assert_eq!(le32(&b, usize::MAX), None);
        assert_eq!(slice(&b, 7, 2), Some(&b[7..]));
        assert_eq!(slice(&b, 8, 2), None);
        assert_eq!(slice(&b, usize::MAX, 1), None);
    }
}
