//! An agent's MCP settings file (`{"mcpServers": {"<name>": {command, args, url, type,
//! disabled, timeout, autoApprove, …}}}`, or VS Code's `{"servers": {…}}`) read into the
//! context's servers. promptc starts no
//! server: what each one offers comes from the context, or from a listing file beside the
//! settings (`<settings stem>.listing.json`: `{"servers": {"<name>": {status, tools,
//! resources, resource_templates, prompts}}}`).

use std::io;
use std::path::Path;

use serde_json::Value;

use crate::confine::Origin;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::load::document::{Document, Format};
use crate::load::read::read_source;
use crate::load::schema_check::{SchemaValidators, article, json_type};
use crate::model::{Limits, McpServer};
use crate::pointer::child_pointer;
use crate::problem::Problem;
use crate::source::{SourceFile, Sources};

/// A server's entry in the settings: each known key with the JSON type it must have. Other
/// keys (`env`, `headers`, a client's own) are kept out of the prompt, not rejected.
const FIELDS: [(&str, &str); 7] = [
    ("command", "string"),
    ("args", "array"),
    ("url", "string"),
    ("type", "string"),
    ("disabled", "boolean"),
    ("timeout", "number"),
    ("autoApprove", "array"),
];

/// What the listing beside the settings gave: each server it added (by its position among
/// the servers) with the JSON pointer to its tools in the listing, and the listing itself.
pub type Listed = (Vec<(usize, String)>, Document);

/// The servers of an MCP settings file, merged into `servers`: a server the context already
/// has keeps what it offers and takes the settings' command and `disabled`; a new one is
/// added, offering what the listing file beside the settings says. `Ok(None)` when the file
/// has problems (recorded); the servers are then unchanged.
pub fn apply(
    sources: &mut Sources,
    root: &Path,
    limits: &Limits,
    path: &Path,
    servers: &mut Vec<McpServer>,
    diagnostics: &mut Diagnostics,
) -> io::Result<Option<Listed>> {
    let Some(settings) = read_json(sources, root, limits, path, diagnostics)? else {
        return Ok(None);
    };
    // Most agents write `mcpServers` (Claude Desktop, Cline, Cursor's `.cursor/mcp.json`);
    // VS Code's `.vscode/mcp.json` writes `servers`, its entries of the same keys. A file with
    // both is refused: whichever promptc read, the servers of the other were lost.
    // An empty table of either loses nothing.
    let holds_servers = |value: &Value| value.as_object().is_none_or(|table| !table.is_empty());
    let key = match (
        settings.value.get("mcpServers"),
        settings.value.get("servers"),
    ) {
        (Some(agents), Some(vs_code)) if holds_servers(agents) && holds_servers(vs_code) => {
            diagnostics.error(Problem::ServerTablesConflict, settings.key_span("/servers"));
            return Ok(None);
        }
        (Some(agents), Some(_)) if holds_servers(agents) => "mcpServers",
        (_, Some(_)) => "servers",
        _ => "mcpServers",
    };
    let table = format!("/{key}");
    let entries = match settings.value.get(key) {
        Some(Value::Object(entries)) => entries,
        Some(other) => {
            diagnostics.error(
                Problem::WrongType {
                    expected: article("table"),
                    found: json_type(other).into(),
                    instead: None,
                },
                settings.value_span(&table),
            );
            return Ok(None);
        }
        None => {
            diagnostics.error(
                Problem::MissingField {
                    field: "mcpServers".into(),
                },
                settings.value_span(""),
            );
            return Ok(None);
        }
    };
    let mut ok = true;
    for (name, entry) in entries {
        let pointer = child_pointer(&table, name);
        // A server is a table of settings under a name: a name that is empty, or settings of
        // another type, stood for a connected server with nothing to start it.
        if name.trim().is_empty() {
            ok = false;
            diagnostics.error(
                Problem::InvalidValue(crate::problem::InvalidValue::EmptyServerName),
                settings.key_span(&pointer),
            );
        }
        if !entry.is_object() {
            ok = false;
            diagnostics.error(
                Problem::WrongType {
                    expected: article("table"),
                    found: json_type(entry).into(),
                    instead: None,
                },
                settings.value_span(&pointer),
            );
            continue;
        }
        // Each argument is a word of the command line: one of another type was left out.
        if let Some(args) = entry.get("args").and_then(Value::as_array) {
            for (index, arg) in args.iter().enumerate() {
                if !arg.is_string() {
                    ok = false;
                    diagnostics.error(
                        Problem::WrongType {
                            expected: article("string"),
                            found: json_type(arg).into(),
                            instead: None,
                        },
                        settings.value_span(&format!("{pointer}/args/{index}")),
                    );
                }
            }
        }
        for (field, expected) in FIELDS {
            let Some(value) = entry.get(field) else {
                continue;
            };
            let fits = match expected {
                "string" => value.is_string(),
                "array" => value.is_array(),
                "boolean" => value.is_boolean(),
                _ => value.is_number(),
            };
            if !fits {
                ok = false;
                diagnostics.error(
                    Problem::WrongType {
                        expected: article(expected),
                        found: json_type(value).into(),
                        instead: None,
                    },
                    settings.value_span(&format!("{pointer}/{field}")),
                );
            }
        }
    }
    let listing_path = listing_path(path);
    crate::looked_at::name(&listing_path);
    // Whatever is at the listing's name is read, or refused with its reason (a folder, a FIFO,
    // a link to nothing or out of the workspace): never skipped without a word.
    let listing = if std::fs::symlink_metadata(&listing_path).is_ok() {
        match read_json(sources, root, limits, &listing_path, diagnostics)? {
            Some(listing) => {
                // Checked as a context's servers are: each problem at its place.
                if !SchemaValidators::shared().check_mcp_listing(&listing, diagnostics) {
                    return Ok(None);
                }
                Some(listing)
            }
            None => return Ok(None),
        }
    } else {
        None
    };
    if !ok {
        return Ok(None);
    }
    if let Some(listing) = &listing {
        unused_listing_entries(listing, entries, servers, diagnostics);
    }
    let mut listed = Vec::new();
    // Each server's place by name (the first of a name, as the context lists them): looked up
    // for every entry, a search of the list made a settings file of 100,000 servers take
    // minutes.
    let mut by_name: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (index, server) in servers.iter().enumerate() {
        by_name.entry(server.name.clone()).or_insert(index);
    }
    for (name, entry) in entries {
        let command = command_line(entry);
        let disabled = entry
            .get("disabled")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let index = match by_name.get(name) {
            Some(&index) => index,
            None => {
                let mut server = McpServer {
                    name: name.clone(),
                    ..McpServer::default()
                };
                let offered = listing
                    .as_ref()
                    .and_then(|listing| listing.value.get("servers")?.get(name));
                // A heading with nothing under it tells the model of a server it cannot use.
                if offered.is_none() && !disabled {
                    diagnostics.push(Diagnostic::new(
                        Problem::ServerNotListed {
                            name: name.clone(),
                            listing: listing_path
                                .file_name()
                                .map(|file| file.to_string_lossy().into_owned())
                                .unwrap_or_default(),
                        },
                        settings.key_span(&child_pointer(&table, name)),
                    ));
                }
                if let Some(offered) = offered {
                    match serde_json::from_value::<McpServer>(with_name(offered, name)) {
                        Ok(offers) => {
                            server = offers;
                            let tools = format!("{}/tools", child_pointer("/servers", name));
                            listed.push((servers.len(), tools));
                        }
                        Err(error) => {
                            let Some(listing) = &listing else {
                                continue;
                            };
                            diagnostics.error(
                                Problem::InvalidValue(crate::problem::InvalidValue::Model {
                                    message: error.to_string(),
                                }),
                                listing.value_span(&child_pointer("/servers", name)),
                            );
                            return Ok(None);
                        }
                    }
                }
                servers.push(server);
                by_name.insert(name.clone(), servers.len() - 1);
                servers.len() - 1
            }
        };
        let server = &mut servers[index];
        if !command.is_empty() {
            server.command = command;
        }
        server.disabled = disabled;
    }
    // A listing with nothing taken from it stands for no file; an empty document in its
    // place names no tool.
    let listing = listing.unwrap_or_else(|| Document::empty(settings.source));
    Ok(Some((listed, listing)))
}

/// The listing's servers that give nothing: one the settings do not name is not added, and
/// one the context already has offers what the context says. Both were left out without a
/// word, though a misspelt server name is the likely cause of the first.
fn unused_listing_entries(
    listing: &Document,
    entries: &serde_json::Map<String, Value>,
    servers: &[McpServer],
    diagnostics: &mut Diagnostics,
) {
    let Some(Value::Object(offered)) = listing.value.get("servers") else {
        return;
    };
    let named: Vec<String> = entries.keys().cloned().collect();
    let in_context: std::collections::HashSet<&str> =
        servers.iter().map(|server| server.name.as_str()).collect();
    for name in offered.keys() {
        // A server the settings do not name is that, whether the context has it or not: the
        // listing would add it only with the settings.
        let in_settings = entries.contains_key(name);
        let in_context = in_settings && in_context.contains(name.as_str());
        if in_settings && !in_context {
            continue;
        }
        let suggestion = if in_context {
            None
        } else {
            crate::namespace::closest(name, &named)
        };
        diagnostics.push(Diagnostic::new(
            Problem::ListingEntryUnused {
                name: name.clone(),
                in_context,
                suggestion,
            },
            listing.key_span(&child_pointer("/servers", name)),
        ));
    }
}

/// `command` and `args` as one command line, else the `url`.
fn command_line(entry: &Value) -> String {
    let mut parts: Vec<&str> = entry
        .get("command")
        .and_then(Value::as_str)
        .into_iter()
        .collect();
    parts.extend(
        entry
            .get("args")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str),
    );
    if parts.is_empty() {
        let url = entry.get("url").and_then(Value::as_str).unwrap_or_default();
        return without_credentials(url).replace(char::is_control, " ");
    }
    // The value of an argument that names a credential (`--token X`, `--api-key=X`) is left
    // out, as the settings' `env` and `headers` are: the prompt goes to a model provider.
    let mut shown = Vec::with_capacity(parts.len());
    let mut secret_next = false;
    for part in parts {
        if secret_next {
            shown.push(HIDDEN.to_string());
            secret_next = false;
            continue;
        }
        match part.split_once('=') {
            Some((flag, _)) if flag.starts_with('-') && names_a_credential(flag) => {
                shown.push(format!("{flag}={HIDDEN}"));
            }
            _ if part.starts_with('-') && names_a_credential(part) => {
                secret_next = true;
                shown.push(part.to_string());
            }
            _ => shown.push(without_credentials(part)),
        }
    }
    // One line, whatever the settings hold: a line break in an argument wrote the prompt's
    // next lines (`## injected`).
    shown.join(" ").replace(char::is_control, " ")
}

/// What stands in a server's command line for a credential left out.
const HIDDEN: &str = "<hidden>";

/// Whether a command-line flag names a credential (`--token`, `--api-key`, `--password`).
fn names_a_credential(flag: &str) -> bool {
    let flag = flag.to_ascii_lowercase();
    [
        "token",
        "key",
        "secret",
        "password",
        "passwd",
        "auth",
        "credential",
    ]
    .iter()
    .any(|word| flag.contains(word))
}

/// A URL without what carries credentials: the user and password before its host, and its
/// query (`?api_key=…`) and fragment. Text that is no URL is given back as it is.
fn without_credentials(text: &str) -> String {
    let Some((scheme, rest)) = text.split_once("://") else {
        return text.to_string();
    };
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let (address, cut) = (&rest[..end], end < rest.len());
    let host_end = address.find('/').unwrap_or(address.len());
    let authority = &address[..host_end];
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let mut shown = format!("{scheme}://{host}{}", &address[host_end..]);
    if cut {
        shown.push_str(&format!("?{HIDDEN}"));
    }
    shown
}

/// A listed server with its name, as the context's server type wants it.
fn with_name(offered: &Value, name: &str) -> Value {
    let mut offered = offered.clone();
    if let Some(object) = offered.as_object_mut() {
        object.insert("name".into(), Value::from(name));
    }
    offered
}

/// `cline_mcp_settings.json` → `cline_mcp_settings.listing.json`.
pub fn listing_path(settings: &Path) -> std::path::PathBuf {
    let stem = settings
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    settings.with_file_name(format!("{stem}.listing.json"))
}

/// What the stripping of `original` into `stripped` took out that is neither a comment nor a
/// comma ending a value, with where it is and what it is: the stripping also takes out a
/// comma after no value (`[,]`, which VS Code refuses, "value expected") and a `/` that
/// starts no comment (at the end of the file).
fn stripped_past_jsonc(original: &str, stripped: &str) -> Option<(usize, &'static str)> {
    let (original, stripped) = (original.as_bytes(), stripped.as_bytes());
    // Where the comments are: a `//` or `/*` outside a string, to the line's end or `*/`.
    let mut at = 0;
    let mut in_string = false;
    while at < original.len().min(stripped.len()) {
        let byte = original[at];
        if in_string {
            match byte {
                b'\\' => at += 1,
                b'"' => in_string = false,
                _ => {}
            }
            at += 1;
            continue;
        }
        match (byte, original.get(at + 1)) {
            (b'"', _) => in_string = true,
            // `#` starts a comment to the line's end too, as the stripping has it.
            (b'/', Some(b'/')) | (b'#', _) => {
                at = memchr::memchr(b'\n', &original[at..]).map_or(original.len(), |end| at + end);
                continue;
            }
            (b'/', Some(b'*')) => {
                let Some(end) = memchr::memmem::find(&original[at + 2..], b"*/") else {
                    return Some((at, "a `/*` comment is not closed: close it with `*/`"));
                };
                at += 2 + end + 2;
                continue;
            }
            _ if byte == stripped[at] => {}
            (b',', _) => {
                let before = stripped[..at]
                    .iter()
                    .rev()
                    .find(|byte| !byte.is_ascii_whitespace());
                if matches!(before, None | Some(b'[' | b'{' | b',')) {
                    return Some((
                        at,
                        "a `,` with no value before it: JSON with comments allows one `,` after the last item, not an empty item",
                    ));
                }
            }
            _ => {
                return Some((
                    at,
                    "a `/` that starts no comment: a comment starts with `//` or `/*`",
                ));
            }
        }
        at += 1;
    }
    None
}

fn read_json(
    sources: &mut Sources,
    root: &Path,
    limits: &Limits,
    path: &Path,
    diagnostics: &mut Diagnostics,
) -> io::Result<Option<Document>> {
    let id = match read_source(
        sources,
        root,
        path,
        Origin::Caller,
        (limits.file(), limits.workspace()),
        None,
    )? {
        Ok(id) => id,
        Err(diagnostic) => {
            diagnostics.push(diagnostic);
            return Ok(None);
        }
    };
    // Comments and trailing commas (VS Code's and Cursor's settings files are JSONC) become
    // spaces of the same length, so every offset read stays the file's own.
    let file = sources.get(id);
    let mut text = file.text.clone();
    // Stripping stops at what is no comment (a `/` alone): the text is stripped up to there,
    // and the JSON reader places the problem at it.
    let _ = json_strip_comments::strip(&mut text);
    // What the stripping takes out is a comment or a comma that ends a value, or refused.
    if let Some((at, message)) = stripped_past_jsonc(&file.text, &text) {
        diagnostics.push(Diagnostic::new(
            Problem::JsonSyntax {
                message: message.into(),
            },
            crate::span::Span::new(id, at..at + 1),
        ));
        return Ok(None);
    }
    let stripped = text != file.text;
    let parsed = if stripped {
        Document::parse(id, &SourceFile::new(file.path.clone(), text), Format::Json)
    } else {
        Document::parse(id, file, Format::Json)
    };
    match parsed {
        Ok(document) => Ok(Some(document)),
        Err(diagnostic) => {
            diagnostics.push(diagnostic);
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_command_line_shows_no_credential() {
        let line = |entry: serde_json::Value| command_line(&entry);
        assert_eq!(
            line(serde_json::json!({"url": "https://user:pass@mcp.example.com/sse?api_key=S#x"})),
            "https://mcp.example.com/sse?<hidden>"
        );
        assert_eq!(
            line(serde_json::json!({"url": "https://mcp.example.com/sse"})),
            "https://mcp.example.com/sse"
        );
        assert_eq!(
            line(
                serde_json::json!({"command": "npx", "args": ["gh-mcp", "--token", "ghp_S", "--api-key=K", "--ro", "http://a:b@h/p"]})
            ),
            "npx gh-mcp --token <hidden> --api-key=<hidden> --ro http://h/p"
        );
        // On one line, whatever an argument holds.
        assert_eq!(
            line(serde_json::json!({"command": "x", "args": ["a\n## injected\r\u{1b}"]})),
            "x a ## injected  "
        );
    }
}
