//! One data file of each kind and format from arbitrary bytes, through the checks loading a
//! workspace runs (UTF-8, syntax, schema, types), then every diagnostic rendered for people
//! and machines. The first byte picks the kind and format; the rest is the file.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use promptc::check_document;
use promptc::problem::Kind;
use promptc::report;

/// Every (kind, file name) loading accepts: JSON is for contexts only.
const FILES: [(Kind, &str); 10] = [
    (Kind::Manifest, "promptc.toml"),
    (Kind::Variant, "variants/v.toml"),
    (Kind::Variant, "variants/v.yaml"),
    (Kind::Component, "components/c.toml"),
    (Kind::Component, "components/c.yml"),
    (Kind::Tool, "tools/t.toml"),
    (Kind::Tool, "tools/t.yaml"),
    (Kind::Context, "examples/contexts/c.toml"),
    (Kind::Context, "examples/contexts/c.yaml"),
    (Kind::Context, "examples/contexts/c.json"),
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let (kind, name) = FILES[usize::from(selector) % FILES.len()];
    let (sources, diagnostics, accepted) = check_document(kind, Path::new(name), bytes.to_vec());
    // A file is refused with a reason, never silently.
    assert_eq!(accepted, !diagnostics.has_errors(), "{diagnostics:?}");
    let sorted = diagnostics.sorted();
    for diagnostic in &sorted {
        let file = sources.get(diagnostic.span.source);
        // The renderers clamp the end of a span; its start must be a place in the file.
        assert!(
            diagnostic.span.start <= diagnostic.span.end
                && diagnostic.span.start <= file.text.len(),
            "span {:?} outside the {} bytes of {}: {diagnostic:?}",
            diagnostic.span,
            file.text.len(),
            file.path.display()
        );
    }
    let _ = report::human(&sorted, &sources, false);
    let _ = report::json(&sorted, &sources);
});
