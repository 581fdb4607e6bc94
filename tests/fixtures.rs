//! The parser against payloads made by real Bun releases across every layout
//! epoch (fixtures/gen), raw and rewrapped in synthetic containers.

use crate::common;

use cc_teardown::bun::{Budget, BunGraph};
use cc_teardown::container::{self, Arch, ContainerOptions, Format, Placement};
use common::*;
use sha2::{Digest, Sha256};

fn opt_u64(v: &serde_json::Value) -> Option<u64> {
    v.as_u64()
}

#[test]
fn every_real_bun_payload_parses_to_its_expected_facts() {
    for (name, payload, exp) in real_bun_fixtures() {
        let g = BunGraph::parse(&payload).unwrap_or_else(|e| panic!("{name}: {e}"));
        let layout = g.layout.unwrap();
        assert_eq!(
            layout.size as u64,
            exp["record_size"].as_u64().unwrap(),
            "{name}: record size"
        );
        assert_eq!(
            g.offsets.size as u64,
            exp["offsets_size"].as_u64().unwrap(),
            "{name}: Offsets size"
        );
        assert_eq!(
            g.offsets.byte_count,
            exp["byte_count"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(
            g.entry as u64,
            exp["entry_point_id"].as_u64().unwrap(),
            "{name}: entry id"
        );
        assert_eq!(
            g.entry_module().name,
            exp["entry"].as_str().unwrap(),
            "{name}: entry"
        );
        assert_eq!(
            g.offsets.flags.map(u64::from),
            opt_u64(&exp["offsets_flags"]),
            "{name}: flags"
        );
        assert_eq!(
            g.exec_argv,
            exp["exec_argv"].as_str().unwrap_or(""),
            "{name}: exec argv"
        );
        let mods = exp["modules"].as_array().unwrap();
        assert_eq!(g.modules.len(), mods.len(), "{name}: module count");
        for (m, e) in g.modules.iter().zip(mods) {
            let what = format!("{name}: {}", m.name);
            assert_eq!(m.name, e["name"].as_str().unwrap(), "{what}");
            assert_eq!(
                m.contents.len() as u64,
                e["contents_len"].as_u64().unwrap(),
                "{what}"
            );
            assert_eq!(
                hex::encode(Sha256::digest(m.contents)),
                e["contents_sha256"].as_str().unwrap(),
                "{what}"
            );
            assert_eq!(
                m.loader_raw as u64,
                e["loader"].as_u64().unwrap(),
                "{what}: loader"
            );
            assert_eq!(
                m.encoding_raw.map(u64::from),
                opt_u64(&e["encoding"]),
                "{what}: encoding"
            );
            assert_eq!(
                m.sourcemap.len() as u64,
                e["sourcemap_len"].as_u64().unwrap(),
                "{what}: sourcemap"
            );
            assert_eq!(
                m.bytecode.length as u64,
                e["bytecode_len"].as_u64().unwrap(),
                "{what}: bytecode"
            );
            if let Some(n) = opt_u64(&e["module_info_len"]) {
                assert_eq!(m.module_info.len() as u64, n, "{what}: module_info");
            }
            if let Some(n) = opt_u64(&e["bytecode_origin_path_len"]) {
                assert_eq!(
                    m.bytecode_origin_path.len() as u64,
                    n,
                    "{what}: origin path"
                );
            }
            assert_eq!(
                m.is_compressed(),
                e["zstd"].as_bool().unwrap(),
                "{what}: zstd"
            );
            // Loader names: js and file are numbered alike in both tables.
            match e["loader"].as_u64().unwrap() {
                1 => assert_eq!(m.loader, "js", "{what}"),
                5 => assert_eq!(m.loader, "file", "{what}"),
                _ => {}
            }
            if let Some(f) = opt_u64(&e["module_format"]) {
                let want = ["none", "esm", "cjs"][f as usize];
                assert_eq!(m.format.as_str(), want, "{what}: format");
            }
        }
        // No fixture has overlapping bytecode, so nothing may be reported shared.
        assert!(
            g.bytecode_region().is_none(),
            "{name}: no shared region expected"
        );
        let sum: u64 = g.modules.iter().map(|m| m.bytecode.length as u64).sum();
        assert_eq!(g.bytecode_bytes(), sum, "{name}");
    }
}

#[test]
fn zstd_assets_decode_to_the_original_file() {
    let blob = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/gen/blob.txt"),
    )
    .unwrap();
    let mut checked = 0;
    for (name, payload, _) in real_bun_fixtures() {
        let g = BunGraph::parse(&payload).unwrap();
        for m in g.modules.iter().filter(|m| m.is_compressed()) {
            assert_eq!(
                g.decoded(m, &Budget::new(1 << 20)).unwrap().as_ref(),
                &blob[..],
                "{name}: {}",
                m.name
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} zstd assets seen");
}

#[test]
fn rewrapped_fixtures_are_found_in_their_containers() {
    for (name, payload, exp) in real_bun_fixtures() {
        let file = rewrap(&payload, &exp);
        let loc = container::locate(&file, &ContainerOptions::default())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(loc.payload, &payload[..], "{name}: payload slice");
        let kind = exp["container"]["kind"].as_str().unwrap();
        let (format, placement) = match kind {
            "macho-section" => (Format::Macho, Placement::Section),
            "elf-section" => (Format::Elf, Placement::Section),
            "pe-section" => (Format::Pe, Placement::Section),
            _ => (Format::Elf, Placement::Appended),
        };
        assert_eq!(loc.info.format, format, "{name}");
        assert_eq!(loc.info.placement, placement, "{name}");
        if placement == Placement::Section {
            assert_eq!(
                loc.info.header_width.map(u64::from),
                exp["container"]["header_width"].as_u64(),
                "{name}: header width"
            );
        }
        BunGraph::parse(loc.payload).unwrap();
    }
}

#[test]
fn fat_macho_picks_the_requested_slice() {
    let fixtures = real_bun_fixtures();
    let a = &fixtures
        .iter()
        .find(|f| f.0 == "1.4.5-darwin-arm64")
        .unwrap()
        .1;
    let b = &fixtures
        .iter()
        .find(|f| f.0 == "1.2.21-darwin-arm64")
        .unwrap()
        .1;
    let arm = macho_with_section(&with_header(a, 8), object::Architecture::Aarch64);
    let x86 = macho_with_section(&with_header(b, 4), object::Architecture::X86_64);
    let fat = fat_macho(&[(CPU_X86_64, &x86), (CPU_ARM64, &arm)]);

    let loc = container::locate(&fat, &ContainerOptions::default()).unwrap();
    assert_eq!(loc.payload, &a[..], "default is the arm64 slice");
    assert_eq!(loc.info.arch.as_deref(), Some("arm64"));
    assert_eq!(loc.info.slices.len(), 2);

    let opts = ContainerOptions {
        arch: Some(Arch::X86_64),
        ..Default::default()
    };
    let loc = container::locate(&fat, &opts).unwrap();
    assert_eq!(loc.payload, &b[..]);
    assert_eq!(loc.info.header_width, Some(4));

    let arm_only = fat_macho(&[(CPU_ARM64, &arm)]);
    let err = container::locate(&arm_only, &opts)
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("no x86_64 slice") && err.contains("arm64"),
        "{err}"
    );
}

#[test]
fn pe_uses_virtual_size_not_padded_raw_size() {
    let (_, payload, _) = real_bun_fixtures()
        .into_iter()
        .find(|f| f.0 == "1.4.5-windows-x64")
        .unwrap();
    let section = with_header(&payload, 8);
    assert_ne!(
        section.len() % 0x200,
        0,
        "the test needs padding after the payload"
    );
    let file = pe_with_section(&section, true);
    let loc = container::locate(&file, &ContainerOptions::default()).unwrap();
    assert_eq!(loc.info.section_size, section.len() as u64);
    assert_eq!(loc.info.arch.as_deref(), Some("arm64"));
    assert_eq!(loc.payload, &payload[..]);
}

#[test]
fn binary_reads_fixture_containers() {
    let dir = tempfile::tempdir().unwrap();
    for (name, payload, exp) in real_bun_fixtures() {
        let path = dir.path().join(&name);
        std::fs::write(&path, rewrap(&payload, &exp)).unwrap();
        let v = json(&["info", path.to_str().unwrap()]);
        assert_eq!(v["bun"]["entry"], exp["entry"], "{name}");
        assert_eq!(
            v["bun"]["modules"].as_u64().unwrap() as usize,
            exp["modules"].as_array().unwrap().len(),
            "{name}"
        );
        let ls = json(&["ls", path.to_str().unwrap()]);
        for (row, e) in ls["modules"]
            .as_array()
            .unwrap()
            .iter()
            .zip(exp["modules"].as_array().unwrap())
        {
            assert_eq!(row["sha256"], e["contents_sha256"], "{name}");
        }
    }
}
