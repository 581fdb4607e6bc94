//! The facts we take from a CMS / PKCS#7 SignedData blob, parsed with the
//! `cms` crate (DER, X.509 and CMS types from RustCrypto).

use super::Malformed;
use cms::cert::CertificateChoices;
use cms::cert::x509::Certificate;
use cms::content_info::ContentInfo;
use cms::signed_data::{SignedData, SignerIdentifier};
use der::asn1::{ObjectIdentifier, OctetString};
use der::{Any, Decode};

/// id-signedData.
const SIGNED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2");
/// id-messageDigest (a signed attribute: the digest of the signed content).
const MESSAGE_DIGEST: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.4");

pub(crate) const SHA1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.14.3.2.26");
pub(crate) const SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.1");
pub(crate) const SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.2");
pub(crate) const SHA512: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.3");

pub(crate) struct CmsFacts {
    /// Subjects of every certificate, in stored order.
    pub certificates: Vec<String>,
    /// Subject of the certificate named by the first signer.
    pub signer: Option<String>,
    /// The first signer's digest algorithm and messageDigest attribute.
    pub signer_digest: Option<(ObjectIdentifier, Vec<u8>)>,
    /// The encapsulated content (Authenticode: SpcIndirectDataContent).
    pub content: Option<Any>,
}

pub(crate) fn read(ber: &[u8]) -> Result<CmsFacts, Malformed> {
    let der_bytes = definite_lengths(ber)?;
    let ci = ContentInfo::from_der(&der_bytes).map_err(|e| format!("CMS: {e}"))?;
    if ci.content_type != SIGNED_DATA {
        return Err(format!("CMS content is {}, not SignedData", ci.content_type).into());
    }
    let sd: SignedData = ci
        .content
        .decode_as()
        .map_err(|e| format!("CMS SignedData: {e}"))?;
    let certs: Vec<&Certificate> = sd
        .certificates
        .as_ref()
        .map(|set| {
            set.0
                .iter()
                .filter_map(|c| match c {
                    CertificateChoices::Certificate(c) => Some(c),
                    CertificateChoices::Other(_) => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let first = sd.signer_infos.0.iter().next();
    let signer = first.and_then(|si| match &si.sid {
        SignerIdentifier::IssuerAndSerialNumber(isn) => certs
            .iter()
            .find(|c| {
                c.tbs_certificate.serial_number == isn.serial_number
                    && c.tbs_certificate.issuer == isn.issuer
            })
            .map(|c| c.tbs_certificate.subject.to_string()),
        SignerIdentifier::SubjectKeyIdentifier(_) => None,
    });
    let signer_digest = first.and_then(|si| {
        let attrs = si.signed_attrs.as_ref()?;
        let attr = attrs.iter().find(|a| a.oid == MESSAGE_DIGEST)?;
        let value = attr.values.iter().next()?;
        let digest: OctetString = value.decode_as().ok()?;
        Some((si.digest_alg.oid, digest.as_bytes().to_vec()))
    });
    Ok(CmsFacts {
        certificates: certs
            .iter()
            .map(|c| c.tbs_certificate.subject.to_string())
            .collect(),
        signer,
        signer_digest,
        content: sd.encap_content_info.econtent,
    })
}

/// Hash `data` with the algorithm named by `oid` (None: not one we know).
pub(crate) fn digest(oid: &ObjectIdentifier, data: &[&[u8]]) -> Option<Vec<u8>> {
    use sha2::Digest;
    fn run<D: Digest>(data: &[&[u8]]) -> Vec<u8> {
        let mut h = D::new();
        for d in data {
            h.update(d);
        }
        h.finalize().to_vec()
    }
    Some(match *oid {
        SHA1 => run::<sha1::Sha1>(data),
        SHA256 => run::<sha2::Sha256>(data),
        SHA384 => run::<sha2::Sha384>(data),
        SHA512 => run::<sha2::Sha512>(data),
        _ => return None,
    })
}

pub(crate) fn digest_name(oid: &ObjectIdentifier) -> String {
    match *oid {
        SHA1 => "sha1".into(),
        SHA256 => "sha256".into(),
        SHA384 => "sha384".into(),
        SHA512 => "sha512".into(),
        other => other.to_string(),
    }
}

/// Deepest nesting [`definite_lengths`] follows (CMS with certificates
/// nests about 15 deep).
const MAX_DEPTH: usize = 48;

/// Largest CMS blob read (Apple's and Authenticode's are 10–30 KB).
const MAX_CMS: usize = 1 << 20;

/// Most elements one constructed value (a SET, a SEQUENCE, a `[0]`) may
/// hold. The `der` crate decodes every SET OF (certificates, signer infos,
/// attributes, the parts of a name) by insertion sort, re-encoding both
/// elements at each comparison: quadratic in the count. Real signatures
/// hold a few (Claude Code's builds, 2.1.220 and 2.1.332, darwin and
/// win32: at most 9 in any value), so counting here, before anything is
/// decoded, bounds that sort at `MAX_ELEMENTS²` comparisons per set.
const MAX_ELEMENTS: usize = 128;

fn too_many(elements: usize) -> Result<(), Malformed> {
    if elements > MAX_ELEMENTS {
        return Err(format!(
            "CMS: a constructed value holds more than {MAX_ELEMENTS} elements (real signatures hold a few dozen at most)"
        ).into());
    }
    Ok(())
}

/// Rewrite BER indefinite lengths as definite ones, changing nothing else.
///
/// Apple's `codesign` writes the CMS blob in BER with indefinite-length
/// encodings, and the `der` crate reads DER only. This touches only the
/// tag-length framing (every tag and primitive value is copied as is); all
/// the parsing of what the bytes mean is left to the `cms` crate.
pub(crate) fn definite_lengths(input: &[u8]) -> Result<Vec<u8>, Malformed> {
    // Each nesting level holds a copy of its content while it is rebuilt:
    // the cap bounds the memory at MAX_DEPTH × MAX_CMS.
    if input.len() > MAX_CMS {
        return Err(format!(
            "CMS blob of {} bytes (more than {MAX_CMS}; real ones are ~10 KB)",
            input.len()
        )
        .into());
    }
    let mut out = Vec::with_capacity(input.len());
    let mut pos = 0;
    reencode(input, &mut pos, &mut out, 0, false)?;
    Ok(out)
}

/// Re-encode one TLV at `*pos` (returns false at an end-of-contents marker
/// when `in_indefinite`).
fn reencode(
    b: &[u8],
    pos: &mut usize,
    out: &mut Vec<u8>,
    depth: usize,
    in_indefinite: bool,
) -> Result<bool, Malformed> {
    if depth > MAX_DEPTH {
        return Err(format!("CMS nests deeper than {MAX_DEPTH}").into());
    }
    let err = || "CMS: truncated BER".to_string();
    let tag_start = *pos;
    let first = *b.get(*pos).ok_or_else(err)?;
    *pos += 1;
    if first == 0 && in_indefinite {
        if b.get(*pos) != Some(&0) {
            return Err("CMS: malformed end-of-contents".into());
        }
        *pos += 1;
        return Ok(false);
    }
    if first & 0x1f == 0x1f {
        // High tag number: continuation bytes while the top bit is set.
        let mut n = 0;
        loop {
            let c = *b.get(*pos).ok_or_else(err)?;
            *pos += 1;
            n += 1;
            if n > 4 {
                return Err("CMS: tag number too long".into());
            }
            if c & 0x80 == 0 {
                break;
            }
        }
    }
    let tag = &b[tag_start..*pos];
    let constructed = first & 0x20 != 0;
    let l0 = *b.get(*pos).ok_or_else(err)?;
    *pos += 1;
    let mut content = Vec::new();
    if l0 == 0x80 {
        if !constructed {
            return Err("CMS: indefinite length on a primitive value".into());
        }
        let mut elements = 0;
        while reencode(b, pos, &mut content, depth + 1, true)? {
            elements += 1;
            too_many(elements)?;
        }
    } else {
        let len = if l0 < 0x80 {
            l0 as usize
        } else {
            let n = (l0 & 0x7f) as usize;
            if n > 4 {
                return Err("CMS: length field too long".into());
            }
            let mut len = 0usize;
            for _ in 0..n {
                len = (len << 8) | *b.get(*pos).ok_or_else(err)? as usize;
                *pos += 1;
            }
            len
        };
        let end = pos
            .checked_add(len)
            .filter(|&e| e <= b.len())
            .ok_or_else(err)?;
        if constructed {
            let inner = &b[..end];
            let mut elements = 0;
            while *pos < end {
                reencode(inner, pos, &mut content, depth + 1, false)?;
                elements += 1;
                too_many(elements)?;
            }
        } else {
            content.extend_from_slice(&b[*pos..end]);
            *pos = end;
        }
    }
    out.extend_from_slice(tag);
    let n = content.len();
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let bytes = (n as u64).to_be_bytes();
        let skip = bytes.iter().take_while(|&&x| x == 0).count();
        out.push(0x80 | (8 - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(&content);
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indefinite_lengths_become_definite() {
        // SEQUENCE (indefinite) { INTEGER 5, SEQUENCE (indefinite) { NULL } }
        let ber = [
            0x30, 0x80, 0x02, 0x01, 0x05, 0x30, 0x80, 0x05, 0x00, 0, 0, 0, 0,
        ];
        assert_eq!(
            definite_lengths(&ber).unwrap(),
            [0x30, 0x07, 0x02, 0x01, 0x05, 0x30, 0x02, 0x05, 0x00]
        );
    }

    #[test]
    fn hostile_ber_is_an_error() {
        // Unterminated, too deep, lengths past the end, long length fields.
        let deep: Vec<u8> = std::iter::repeat_n([0x30u8, 0x80], 10_000)
            .flatten()
            .collect();
        for bad in [
            &[0x30, 0x80, 0x02, 0x01][..],
            &deep[..],
            &[0x30, 0x84, 0xff, 0xff, 0xff, 0xff][..],
            &[0x30, 0x89, 1, 1, 1, 1, 1, 1, 1, 1, 1][..],
            &[0x04, 0x80, 0, 0][..],
            &[0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00][..],
        ] {
            assert!(definite_lengths(bad).is_err(), "{bad:?}");
            assert!(read(bad).is_err());
        }
        // A SET of more elements than the cap, definite and indefinite:
        // refused before any decoding sorts it; the cap itself is read.
        for n in [MAX_ELEMENTS, MAX_ELEMENTS + 1, 10_600] {
            let nulls = [0x05u8, 0x00].repeat(n);
            let mut definite = vec![0x31, 0x83];
            definite.extend_from_slice(&(nulls.len() as u32).to_be_bytes()[1..]);
            definite.extend_from_slice(&nulls);
            let mut indefinite = vec![0x31, 0x80];
            indefinite.extend_from_slice(&nulls);
            indefinite.extend_from_slice(&[0, 0]);
            for ber in [definite, indefinite] {
                let r = definite_lengths(&ber);
                if n > MAX_ELEMENTS {
                    assert!(r.unwrap_err().to_string().contains("more than"), "{n}");
                } else {
                    assert_eq!(r.unwrap().len(), 4 + 2 * n, "{n}");
                }
            }
        }
        let huge = vec![0x30; MAX_CMS + 1];
        assert!(
            definite_lengths(&huge)
                .unwrap_err()
                .to_string()
                .contains("more than")
        );
    }
}
