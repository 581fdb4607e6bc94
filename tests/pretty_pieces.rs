//! `pretty` of a single-bundle build parses and prints its one large
//! script in pieces (bounded memory): the output and the line map are the
//! one-pass print's, byte for byte, on a real build (downloaded at test time).

use crate::common;

use cc_teardown::bun::BunGraph;
use cc_teardown::container::{self, ContainerOptions};
use cc_teardown::js::parse::{self, Goal};
use cc_teardown::js::pieces::{self, Pieces};
use cc_teardown::js::print;
use common::*;

#[test]
#[cfg_attr(cc_offline, ignore = "CC_TEARDOWN_OFFLINE=1: downloads real builds")]
fn v2_1_220_in_pieces_equals_one_pass() {
    let path = fetch("2.1.220", "darwin-arm64");
    let bytes = std::fs::read(path).unwrap();
    let loc = container::locate(&bytes, &ContainerOptions::default()).unwrap();
    let g = BunGraph::parse(loc.payload).unwrap();
    let src = std::str::from_utf8(g.entry_module().contents)
        .unwrap()
        .to_string();
    parse::with_big_stack(|| {
        let Pieces::Printed { printed, file, .. } =
            pieces::print_in_pieces("cli.js", src.clone(), Goal::Script)
        else {
            panic!("the 2.1.220 bundle was not cut into pieces");
        };
        assert_eq!(file.src.len(), src.len());
        let (p, c) = parse::parse("cli.js", src, Goal::Script).unwrap();
        let whole = print::print(&p, &c).unwrap();
        std::mem::forget(p);
        assert!(
            printed.code == whole.code,
            "pieces differ from one pass at byte {:?}",
            printed
                .code
                .bytes()
                .zip(whole.code.bytes())
                .position(|(a, b)| a != b)
        );
        assert_eq!(printed.map.pretty_lines, whole.map.pretty_lines);
        assert!(
            serde_json::to_vec(&printed.map.to_file("cli.js")).unwrap()
                == serde_json::to_vec(&whole.map.to_file("cli.js")).unwrap(),
            "the line map files differ"
        );
        for line in (1..whole.map.raw.lines() as u32).step_by(101) {
            assert_eq!(
                printed.map.raw_to_pretty(line, 1),
                whole.map.raw_to_pretty(line, 1),
                "raw line {line}"
            );
        }
    });
}
