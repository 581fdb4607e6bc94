//! PE Authenticode: the certificate table (data directory 4) holds a
//! PKCS#7 SignedData whose content, an `SpcIndirectDataContent`, carries the
//! digest of the file. The digest is recomputed here over the whole file
//! except the checksum field, the certificate-table directory entry and the
//! certificate table itself (Microsoft's "Windows Authenticode Portable
//! Executable Signature Format", the linear form `signtool` produces).

use super::{
    AuthenticodeFacts, Kind, Malformed, NOT_CHECKED, PE_CHECKED, Signature, Status, TRUST_NOTE,
    cms_info,
};
use crate::container::ContainerInfo;
use crate::container::bytes::{le16, le32, slice};
use der::Sequence;
use der::asn1::{ObjectIdentifier, OctetString};

/// `SpcIndirectDataContent ::= SEQUENCE { data SpcAttributeTypeAndOptionalValue, messageDigest DigestInfo }`
#[derive(Sequence)]
struct SpcIndirectDataContent {
    data: SpcAttributeTypeAndOptionalValue,
    message_digest: DigestInfo,
}

#[derive(Sequence)]
struct SpcAttributeTypeAndOptionalValue {
    kind: ObjectIdentifier,
    /// SpcPeImageData (flags and a link): nothing we check.
    #[asn1(optional = "true")]
    _value: Option<der::Any>,
}

#[derive(Sequence)]
struct DigestInfo {
    algorithm: cms::cert::x509::spki::AlgorithmIdentifierOwned,
    digest: OctetString,
}

const WIN_CERT_TYPE_PKCS_SIGNED_DATA: u16 = 2;
/// SPC_PE_IMAGE_DATAOBJ.
const SPC_PE_IMAGE_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.4.1.311.2.1.15");

fn result(status: Status, summary: String, facts: Option<AuthenticodeFacts>) -> Signature {
    let signer = facts.as_ref().and_then(|f| f.signer.clone());
    Signature {
        kind: if status == Status::Unsigned {
            Kind::None
        } else {
            Kind::Authenticode
        },
        status,
        summary,
        identifier: None,
        team_id: None,
        cdhash: None,
        signer,
        trust: TRUST_NOTE,
        checked: if status == Status::Unsigned {
            Vec::new()
        } else {
            PE_CHECKED.to_vec()
        },
        not_checked: if status == Status::Unsigned {
            Vec::new()
        } else {
            NOT_CHECKED.to_vec()
        },
        identity_verified: false,
        slices: Vec::new(),
        authenticode: facts,
        published: None,
    }
}

pub(super) fn check(bytes: &[u8], info: &ContainerInfo) -> Signature {
    match check_inner(bytes, info) {
        Ok(s) => s,
        Err(e) => result(Status::Malformed, format!("malformed ({e})"), None),
    }
}

/// Where the headers put what the digest skips: the checksum field, the
/// certificate table's directory entry, and the table itself.
struct Layout {
    checksum: usize,
    /// The certificate table's directory entry (8 bytes).
    entry: usize,
    table_offset: usize,
    /// 0: unsigned.
    table_size: usize,
}

fn layout(bytes: &[u8]) -> Result<Layout, Malformed> {
    let pe = le32(bytes, 0x3c).ok_or("DOS header truncated")? as usize;
    if slice(bytes, pe, 4) != Some(b"PE\0\0") {
        return Err("no PE signature".into());
    }
    let coff = pe + 4;
    let opt_size = le16(bytes, coff + 16).ok_or("COFF header truncated")? as usize;
    let opt = coff + 20;
    let (dirs, count_at) = match le16(bytes, opt).ok_or("optional header truncated")? {
        0x10b => (opt + 96, opt + 92),
        0x20b => (opt + 112, opt + 108),
        m => return Err(format!("optional header magic {m:#x}").into()),
    };
    let checksum = opt + 64;
    let count = le32(bytes, count_at).ok_or("optional header truncated")? as usize;
    let entry = dirs + 4 * 8;
    if count < 5 || entry + 8 > opt + opt_size {
        return Ok(Layout {
            checksum,
            entry,
            table_offset: 0,
            table_size: 0,
        });
    }
    let off = le32(bytes, entry).ok_or("data directories truncated")? as usize;
    let size = le32(bytes, entry + 4).ok_or("data directories truncated")? as usize;
    Ok(Layout {
        checksum,
        entry,
        table_offset: off,
        table_size: size,
    })
}

fn check_inner(bytes: &[u8], info: &ContainerInfo) -> Result<Signature, Malformed> {
    let Layout {
        checksum,
        entry,
        table_offset: off,
        table_size: size,
    } = layout(bytes)?;
    if size == 0 {
        return Ok(result(
            Status::Unsigned,
            "unsigned (no Authenticode certificate table)".into(),
            None,
        ));
    }
    let table = slice(bytes, off, size).ok_or_else(|| {
        format!(
            "certificate table at {off}+{size} runs past the end of the file ({} bytes)",
            bytes.len()
        )
    })?;
    if off < entry + 8 {
        return Err(format!("certificate table at {off} overlaps the headers").into());
    }
    let len = le32(table, 0).ok_or("certificate entry truncated")? as usize;
    let kind = le16(table, 6).ok_or("certificate entry truncated")?;
    if kind != WIN_CERT_TYPE_PKCS_SIGNED_DATA {
        return Err(format!("certificate type {kind} is not PKCS#7 SignedData").into());
    }
    let der = table
        .get(8..len)
        .ok_or_else(|| format!("certificate entry claims {len} bytes of {size}"))?;
    let cms = cms_info::read(der)?;
    let content = cms
        .content
        .as_ref()
        .ok_or("SignedData has no SpcIndirectDataContent")?;
    let spc: SpcIndirectDataContent = content
        .decode_as()
        .map_err(|e| format!("SpcIndirectDataContent: {e}"))?;
    // The signed content must describe a PE image, not some other object
    // (a CAB or a catalog) whose digest happens to be carried here.
    if spc.data.kind != SPC_PE_IMAGE_DATA {
        return Err(format!("the signature is for {}, not a PE image", spc.data.kind).into());
    }
    let alg = spc.message_digest.algorithm.oid;
    let signed = spc.message_digest.digest.as_bytes();
    let parts: [&[u8]; 3] = [
        &bytes[..checksum],
        &bytes[checksum + 4..entry],
        &bytes[entry + 8..off],
    ];
    let computed =
        cms_info::digest(&alg, &parts).ok_or_else(|| format!("unknown digest algorithm {alg}"))?;
    let trailing = (bytes.len() - off - size) as u64;
    let facts = AuthenticodeFacts {
        digest_algorithm: cms_info::digest_name(&alg),
        signed_digest: hex::encode(signed),
        computed_digest: hex::encode(&computed),
        signer: cms.signer,
        certificates: cms.certificates,
        table_offset: off as u64,
        table_size: size as u64,
        placement: placement(info, off as u64, size as u64),
        trailing_bytes: trailing,
    };
    Ok(if computed == signed {
        result(
            Status::Valid,
            "hashes match (Authenticode digest); signer not verified".into(),
            Some(facts),
        )
    } else {
        result(
            Status::Broken,
            format!(
                "broken (Authenticode {} digest differs: signed {}, file {})",
                facts.digest_algorithm,
                short(&facts.signed_digest),
                short(&facts.computed_digest)
            ),
            Some(facts),
        )
    })
}

fn short(h: &str) -> &str {
    h.get(..16).unwrap_or(h)
}

fn placement(info: &ContainerInfo, off: u64, size: u64) -> String {
    if info.section.is_none() {
        return if off >= info.payload_offset + info.payload_size {
            "after the appended Bun payload".into()
        } else {
            "before the appended Bun payload".into()
        };
    }
    let (start, end) = (info.section_offset, info.section_offset + info.section_size);
    if off >= end {
        format!("after the Bun section (which ends at {end})")
    } else if off + size <= start {
        format!("before the Bun section (which starts at {start})")
    } else {
        "overlapping the Bun section".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal PE32+ header with a certificate table of `table` bytes.
    fn pe_with_table(table: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; 0x200];
        b[..2].copy_from_slice(b"MZ");
        b[0x3c..0x40].copy_from_slice(&0x80u32.to_le_bytes());
        b[0x80..0x84].copy_from_slice(b"PE\0\0");
        let opt = 0x84 + 20;
        b[0x84 + 16..0x84 + 18].copy_from_slice(&240u16.to_le_bytes());
        b[opt..opt + 2].copy_from_slice(&0x20bu16.to_le_bytes());
        b[opt + 108..opt + 112].copy_from_slice(&16u32.to_le_bytes());
        let entry = opt + 112 + 32;
        b[entry..entry + 4].copy_from_slice(&0x200u32.to_le_bytes());
        b[entry + 4..entry + 8].copy_from_slice(&(table.len() as u32).to_le_bytes());
        b.extend_from_slice(table);
        b
    }

    #[test]
    fn no_table_is_unsigned() {
        let b = pe_with_table(&[]);
        assert_eq!(super::super::check_bytes(&b).status, Status::Unsigned);
    }

    #[test]
    fn hostile_tables_are_findings() {
        for table in [
            vec![0u8; 4],
            {
                let mut t = vec![0u8; 16];
                t[..4].copy_from_slice(&0xffff_ffffu32.to_le_bytes());
                t[6] = 2;
                t
            },
            {
                let mut t = vec![0x30, 0x84, 0xff, 0xff, 0xff, 0xff];
                t.splice(0..0, [14, 0, 0, 0, 0, 2, 2, 0]);
                t
            },
        ] {
            let s = super::super::check_bytes(&pe_with_table(&table));
            assert_eq!(s.status, Status::Malformed, "{}", s.summary);
        }
        // A table entry pointing past the end.
        let mut b = pe_with_table(&[0u8; 8]);
        let entry = 0x84 + 20 + 112 + 32;
        b[entry + 4..entry + 8].copy_from_slice(&0xffff_fff0u32.to_le_bytes());
        let s = super::super::check_bytes(&b);
        assert!(s.summary.contains("runs past the end"), "{}", s.summary);
    }
}
