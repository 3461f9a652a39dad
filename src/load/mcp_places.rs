//! Where each MCP tool of a request's context is written, so that a problem with one (a
//! native name too long, two tools under one name) points at the tool: in the context file
//! that lists it, in the context it inherits its servers from, or in the listing beside
//! `--mcp` settings. A context given as data with no file behind it has no places, and its
//! tools' problems fall back to the manifest's naming rule.

use crate::load::document::Document;
use crate::load::entry::Entry;
use crate::model::Context;
use crate::pointer::child_pointer;
use crate::span::Span;
use indexmap::IndexMap;

/// The span of each MCP tool's name, by server and tool position in the context's
/// `mcp_servers` (the positions the compile's findings use).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpPlaces {
    names: Vec<Vec<Option<Span>>>,
}

impl McpPlaces {
    /// The places of the tools `entry` lists, or that the context it extends lists when it
    /// writes no servers of its own (lists replace, so the servers come whole from one file).
    pub fn of_context(entry: &Entry<Context>, contexts: &IndexMap<String, Entry<Context>>) -> Self {
        crate::load::contexts::chain(entry, contexts)
            .find(|entry| entry.document.writes("/mcp_servers"))
            .map_or_else(Self::default, |entry| Self::written_in(&entry.document))
    }

    /// The tools a context document writes under `mcp_servers`, counted by the positions
    /// the document records (its value may have been taken out of it).
    fn written_in(document: &Document) -> Self {
        let mut places = Self::default();
        let mut server = 0;
        while document.writes(&format!("/mcp_servers/{server}")) {
            let tools = format!("/mcp_servers/{server}/tools");
            let mut count = 0;
            while document.writes(&format!("{tools}/{count}")) {
                count += 1;
            }
            places.set(server, document, &tools, count);
            server += 1;
        }
        places
    }

    /// Server `server`'s `count` tools, listed in `document` under `tools` (a JSON pointer
    /// to the list).
    pub fn set(&mut self, server: usize, document: &Document, tools: &str, count: usize) {
        if self.names.len() <= server {
            self.names.resize(server + 1, Vec::new());
        }
        self.names[server] = (0..count)
            .map(|tool| {
                let name = format!("{}/name", child_pointer(tools, &tool.to_string()));
                document.writes(&name).then(|| document.value_span(&name))
            })
            .collect();
    }

    /// Where tool `tool` of server `server` is named, when a file names it.
    pub fn name(&self, server: usize, tool: usize) -> Option<Span> {
        *self.names.get(server)?.get(tool)?
    }
}
