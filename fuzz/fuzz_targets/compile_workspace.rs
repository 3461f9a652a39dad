//! A small workspace built from a structure (`arbitrary`): a few variants, components, tools
//! and contexts whose conditions and templates come from a small alphabet of fragments, valid
//! and broken. It is written to a temporary folder, loaded and validated like `promptc
//! validate` does, and when sound compiled for every family × context of its matrix.

#![no_main]

use std::fmt::Write as _;
use std::path::Path;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use promptc::{Request, Selection};

use promptc::model::Context;
use promptc::report;

const VARIANTS: [&str; 3] = ["generic", "next-gen", "xs"];
const COMPONENTS: [&str; 4] = ["intro", "rules", "tool_use", "system_info"];
const TOOLS: [&str; 3] = ["read_file", "write_to_file", "browser_action"];
const CONTEXTS: [&str; 3] = ["basic", "plan", "bare"];

const FRAGMENTS: [&str; 34] = [
    "You are an agent.\n",
    "\n\n",
    "====\n",
    "{{ cwd }}",
    "{{ CURRENT_DATE }}",
    "{{ INTRO_SECTION }}",
    "{{ RULES_SECTION }}",
    "{{ TOOL_USE_SECTION }}",
    "{{ SYSTEM_INFO_SECTION }}",
    "{{ TOOLS }}",
    "{% if browser.enabled %}browser{% endif %}",
    "{% if mode == 'plan' %}",
    "{% endif %}",
    "{% for t in tools %}- {{ t.name }}: {{ t.description }}\n{% endfor %}",
    "{% for s in mcp_servers %}{{ s.name }}{% for t in s.tools %} {{ t.name }}{% endfor %}{% endfor %}",
    "{{ rules }}",
    "{{ AGENT_NAME }}",
    "{{ family }}/{{ variant.id }}",
    "{{ enabled_tools | join(', ') }}",
    "{{ missing_name }}",
    "{% if %}",
    "{{ ",
    "{# note #}",
    "{{ extra.team | default('none') }}",
    "{{ tool.name }}",
    "{% set x = 3 %}{{ x * 2 }}",
    "{{ has_mcp }}",
    "{{ mcp_servers | length }}",
    "{% raw %}{{ x }}{% endraw %}",
    "ü\\\"'\t",
    "{{ yolo and not has_mcp }}",
    "{% include 'generic.md' %}",
    "{% import 'generic.md' as m %}",
    "{% import 'generic.md' as 1 %}",
];

const CONDITIONS: [&str; 12] = [
    "browser.enabled",
    "mode == 'plan'",
    "not yolo",
    "has_mcp",
    "browser.enabeld",
    "((",
    "family == 'xs'",
    "'read_file' in enabled_tools",
    "focus_chain.enabled and focus_chain.remind_every > 3",
    "plan_mode",
    "variant.labels.prod == 1",
    "",
];

#[derive(Arbitrary, Debug)]
struct Spec {
    variants: [Option<VariantSpec>; 3],
    components: [Option<ComponentSpec>; 4],
    tools: [Option<ToolSpec>; 3],
    contexts: [Option<ContextSpec>; 3],
    predicates: Vec<(bool, u8)>,
    raw_postprocess: bool,
    matrix_families: Option<Vec<u8>>,
    yaml: u8,
}

#[derive(Arbitrary, Debug)]
struct VariantSpec {
    extends: Option<u8>,
    family: Option<u8>,
    template: Template,
    template_in_file: bool,
    components: Option<Vec<u8>>,
    add_components: Option<Vec<u8>>,
    tools: Option<Vec<u8>>,
    overrides: Vec<Override>,
    placeholder: Option<u8>,
    tool_format: Option<Template>,
    max_prompt_tokens: Option<u16>,
}

#[derive(Arbitrary, Debug)]
struct Override {
    component: bool,
    target: u8,
    enabled: Option<bool>,
    order: Option<u8>,
    template: Option<Template>,
}

#[derive(Arbitrary, Debug)]
struct ComponentSpec {
    when: Option<u8>,
    template: Option<Template>,
    template_in_file: bool,
    family: Option<(u8, Template)>,
}

#[derive(Arbitrary, Debug)]
struct ToolSpec {
    description: Template,
    when: Option<u8>,
    parameters: Vec<(u8, bool, Option<u8>, Option<u8>)>,
    family: Option<(u8, Option<u8>, Template)>,
}

#[derive(Arbitrary, Debug)]
struct ContextSpec {
    plan: bool,
    yolo: bool,
    browser: bool,
    date: bool,
    rules: Template,
    mcp: Option<Template>,
    json: bool,
}

#[derive(Arbitrary, Debug)]
struct Template(Vec<u8>);

impl Template {
    fn text(&self) -> String {
        self.0
            .iter()
            .take(12)
            .map(|&i| FRAGMENTS[usize::from(i) % FRAGMENTS.len()])
            .collect()
    }
}

fn pick<'a>(names: &[&'a str], index: u8) -> &'a str {
    names[usize::from(index) % names.len()]
}

fn condition(index: u8) -> &'static str {
    pick(&CONDITIONS, index)
}

/// A string literal valid in TOML, YAML and JSON alike.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

fn list(names: &[&str], indexes: &[u8]) -> String {
    let items: Vec<String> = indexes
        .iter()
        .take(5)
        .map(|&i| quoted(pick(names, i)))
        .collect();
    format!("[{}]", items.join(", "))
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create a folder");
    }
    std::fs::write(path, text).expect("write a file");
}

/// Writes a flat table of `key = value` lines as TOML, or as YAML (`key: value`) when asked.
fn data_file(root: &Path, stem: &str, yaml: bool, lines: &[(String, String)]) {
    let mut text = String::new();
    for (key, value) in lines {
        if yaml {
            let _ = writeln!(text, "{key}: {value}");
        } else {
            let _ = writeln!(text, "{key} = {value}");
        }
    }
    let ext = if yaml { "yaml" } else { "toml" };
    write(root, &format!("{stem}.{ext}"), &text);
}

fn inline(table: &[(String, String)], yaml: bool) -> String {
    let sep = if yaml { ": " } else { " = " };
    let items: Vec<String> = table.iter().map(|(k, v)| format!("{k}{sep}{v}")).collect();
    format!("{{ {} }}", items.join(", "))
}

fn build(spec: &Spec, root: &Path) {
    let mut manifest = String::from("name = \"fuzz\"\nfallback_family = \"generic\"\n");
    if spec.raw_postprocess {
        manifest.push_str("postprocess = []\n");
    }
    if let Some(families) = &spec.matrix_families {
        let _ = write!(
            manifest,
            "[build]\nfamilies = {}\n",
            list(&VARIANTS, families)
        );
    }
    if !spec.predicates.is_empty() {
        manifest.push_str("[predicates]\n");
        for (i, (plan, cond)) in spec.predicates.iter().take(3).enumerate() {
            let name = if *plan {
                "plan_mode".to_string()
            } else {
                format!("p{i}")
            };
            let _ = writeln!(manifest, "{name} = {}", quoted(condition(*cond)));
        }
    }
    write(root, "promptc.toml", &manifest);

    for (i, variant) in spec.variants.iter().enumerate() {
        let Some(v) = variant else { continue };
        let id = VARIANTS[i];
        let yaml = spec.yaml & (1 << i) != 0;
        let mut lines = vec![("id".to_string(), quoted(id))];
        if let Some(parent) = v.extends {
            lines.push(("extends".into(), quoted(pick(&VARIANTS, parent))));
        }
        if let Some(family) = v.family {
            lines.push(("family".into(), quoted(pick(&VARIANTS, family))));
        }
        if v.template_in_file {
            lines.push(("template_file".into(), quoted(&format!("{id}.md"))));
            write(root, &format!("variants/{id}.md"), &v.template.text());
        } else {
            lines.push(("template".into(), quoted(&v.template.text())));
        }
        if let Some(c) = &v.components {
            lines.push(("components".into(), list(&COMPONENTS, c)));
        }
        if let Some(c) = &v.add_components {
            lines.push(("add_components".into(), list(&COMPONENTS, c)));
        }
        if let Some(t) = &v.tools {
            lines.push(("tools".into(), list(&TOOLS, t)));
        }
        if let Some(format) = &v.tool_format {
            lines.push(("tool_format".into(), quoted(&format.text())));
        }
        if let Some(max) = v.max_prompt_tokens {
            lines.push(("max_prompt_tokens".into(), max.to_string()));
        }
        if let Some(p) = v.placeholder {
            let value = quoted(pick(&FRAGMENTS, p));
            lines.push((
                "placeholders".into(),
                inline(&[("AGENT_NAME".into(), value)], yaml),
            ));
        }
        let mut components = Vec::new();
        let mut tools = Vec::new();
        for o in v.overrides.iter().take(3) {
            let mut fields = Vec::new();
            if let Some(enabled) = o.enabled {
                fields.push(("enabled".to_string(), enabled.to_string()));
            }
            if let Some(order) = o.order {
                fields.push(("order".to_string(), (order % 6).to_string()));
            }
            if let Some(template) = &o.template {
                fields.push(("template".to_string(), quoted(&template.text())));
            }
            if o.component {
                components.push((
                    pick(&COMPONENTS, o.target).to_string(),
                    inline(&fields, yaml),
                ));
            } else {
                tools.push((pick(&TOOLS, o.target).to_string(), inline(&fields, yaml)));
            }
        }
        components.dedup_by(|a, b| a.0 == b.0);
        tools.sort();
        tools.dedup_by(|a, b| a.0 == b.0);
        components.sort();
        components.dedup_by(|a, b| a.0 == b.0);
        if !components.is_empty() || !tools.is_empty() {
            let overrides = [
                ("components".to_string(), inline(&components, yaml)),
                ("tools".to_string(), inline(&tools, yaml)),
            ];
            lines.push(("overrides".into(), inline(&overrides, yaml)));
        }
        data_file(root, &format!("variants/{id}"), yaml, &lines);
    }

    for (i, component) in spec.components.iter().enumerate() {
        let Some(c) = component else { continue };
        let id = COMPONENTS[i];
        let yaml = spec.yaml & (1 << (i + 3)) != 0;
        let mut lines = vec![("id".to_string(), quoted(id))];
        if let Some(when) = c.when {
            lines.push(("when".into(), quoted(condition(when))));
        }
        match (&c.template, c.template_in_file) {
            (Some(t), false) => lines.push(("template".into(), quoted(&t.text()))),
            (Some(t), true) => {
                lines.push(("template_file".into(), quoted(&format!("{id}.txt"))));
                write(root, &format!("components/{id}.txt"), &t.text());
            }
            // The default: `<id>.md` beside the file, or none at all.
            (None, true) => write(root, &format!("components/{id}.md"), "{{ cwd }}\n"),
            (None, false) => {}
        }
        if let Some((family, template)) = &c.family {
            let fields = [("template".to_string(), quoted(&template.text()))];
            let families = [(pick(&VARIANTS, *family).to_string(), inline(&fields, yaml))];
            lines.push(("families".into(), inline(&families, yaml)));
        }
        data_file(root, &format!("components/{id}"), yaml, &lines);
    }

    for (i, tool) in spec.tools.iter().enumerate() {
        let Some(t) = tool else { continue };
        let id = TOOLS[i];
        let yaml = spec.yaml & (1 << (i % 8)) != 0;
        let mut lines = vec![
            ("id".to_string(), quoted(id)),
            ("description".into(), quoted(&t.description.text())),
        ];
        if let Some(when) = t.when {
            lines.push(("when".into(), quoted(condition(when))));
        }
        let parameters: Vec<String> = t
            .parameters
            .iter()
            .take(3)
            .map(|(name, required, depends, when)| {
                let mut fields = vec![
                    ("name".to_string(), quoted(&format!("p{}", name % 4))),
                    ("required".to_string(), required.to_string()),
                    ("instruction".to_string(), quoted(pick(&FRAGMENTS, *name))),
                ];
                if let Some(depends) = depends {
                    fields.push(("depends_on".into(), list(&TOOLS, &[*depends])));
                }
                if let Some(when) = when {
                    fields.push(("when".into(), quoted(condition(*when))));
                }
                inline(&fields, yaml)
            })
            .collect();
        if !parameters.is_empty() {
            lines.push(("parameters".into(), format!("[{}]", parameters.join(", "))));
        }
        if let Some((family, based_on, description)) = &t.family {
            let mut fields = vec![("description".to_string(), quoted(&description.text()))];
            if let Some(based_on) = based_on {
                fields.push(("based_on".into(), quoted(pick(&VARIANTS, *based_on))));
            }
            let families = [(pick(&VARIANTS, *family).to_string(), inline(&fields, yaml))];
            lines.push(("families".into(), inline(&families, yaml)));
        }
        data_file(root, &format!("tools/{id}"), yaml, &lines);
    }

    for (i, context) in spec.contexts.iter().enumerate() {
        let Some(c) = context else { continue };
        let mut value = serde_json::json!({
            "cwd": "/home/dev/shop",
            "mode": if c.plan { "plan" } else { "act" },
            "yolo": c.yolo,
            "browser": { "enabled": c.browser, "viewport": { "width": 900, "height": 600 } },
            "rules": c.rules.text(),
        });
        if c.date {
            value["date"] = "2026-11-01".into();
        }
        if let Some(description) = &c.mcp {
            value["mcp_servers"] = serde_json::json!([{
                "name": "github",
                "tools": [{ "name": "create_issue", "description": description.text() }],
            }]);
        }
        // A context is plain data: JSON is the simplest faithful writer of it.
        let ext = if c.json { "json" } else { "yaml" };
        let text = serde_json::to_string_pretty(&value).unwrap_or_default();
        write(
            root,
            &format!("examples/contexts/{}.{ext}", CONTEXTS[i]),
            &text,
        );
    }
}

fuzz_target!(|spec: Spec| {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let root = dir.path();
    build(&spec, root);
    let Ok(loaded) = promptc::load_workspace(root) else {
        return;
    };
    let workspace = &loaded.workspace;
    let has_errors = loaded.diagnostics.has_errors();
    let sorted = loaded.diagnostics.sorted();
    let _ = report::human(&sorted, workspace.sources(), false);
    let _ = report::json(&sorted, workspace.sources());
    if has_errors {
        return;
    }
    let found = promptc::matrix_diagnostics(workspace, Some(1_700_000_000)).sorted();
    let _ = report::human(&found, workspace.sources(), false);
    let run = promptc::compile_matrix(&promptc::Compiler::new(workspace), None);
    for (_, compiled) in &run.outputs {
        let _ = serde_json::to_string(compiled);
    }
    let request = Request::new(Selection::fallback(), Context::default());
    let _ = promptc::Compiler::new(&workspace).compile(&request);
});
