//! Renders remembered by what they read. A template's output depends only on its text and on
//! the values of the names it reads ([`Templates::reads`]): the tool format for a tool whose
//! texts do not change with the context, a section over the same placeholders. So a render
//! that meets the same values as an earlier one of the same [`Compiler`](crate::Compiler)
//! takes that one's text and the fuel it spent, and the compile goes on as if it had rendered.
//!
//! The key is the values themselves, written out with their kinds (an integer and a float that
//! compare equal render differently), not a hash of them: two keys are the same only when
//! every byte is. Values that cannot be written out this way (iterators, objects with
//! behaviour of their own) and large ones are not remembered; nor are failed renders.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use minijinja::Value;
use rustc_hash::FxBuildHasher;

use crate::bounded_memo::BoundedMemo;
use crate::compiled::{CompiledParameter, CompiledTool, CompiledTools, SourceRange};
use crate::templates::written::{write_bytes, write_value};
use crate::templates::{TemplateId, Templates};

/// Values larger than this, written out, are not worth the copy: a template that reads that
/// much (the base template, over every section) mostly copies it, which is about what writing
/// the key costs. Such a template renders, then and from then on.
const MAX_KEY_BYTES: usize = 4 * 1024;
/// The most room a render starts with. A template that once rendered a megabyte may render
/// a few bytes the next time, on every compile thread at once: past this, its buffer grows as
/// it is written. Prompt-long renders (tens of kilobytes) are what the room saves copies of.
const MAX_EXPECTED_LENGTH: u64 = 1 << 20;
/// Past this many bytes of keys and texts, what is remembered is dropped and the memo starts
/// again, so a long run (a matrix of thousands of outputs) holds a bounded amount.
const MAX_HELD_BYTES: usize = 32 * 1024 * 1024;

/// What a `Compiler`'s renders remember, shared by its threads.
pub struct RenderMemo {
    /// What each template the memo was made with reads, by id. Every render asks, on every
    /// compile thread: each template has a slot of its own, read without a lock.
    reads: Box<[Reads]>,
    /// `reads` of the templates added since the memo was made (a context's rules).
    later_reads: RwLock<HashMap<TemplateId, Option<Names>, FxBuildHasher>>,
    /// Counted by their keys and texts.
    renders: BoundedMemo<Key, Remembered>,
    /// Each tool as a template value, by the tool written out (`write_tool`); counted twice
    /// its written length, the value being about as large.
    tool_values: BoundedMemo<Box<[u8]>, Value>,
    /// Whole tool sections, by what they depend on (see `Renderer::tools`).
    tool_sections: BoundedMemo<Box<[u8]>, Arc<ToolSection>>,
    /// The length of each template's last render, by id: the next render's buffer starts at
    /// that size. Grown from empty, the buffer of a prompt-long render was copied a dozen
    /// times, each copy into fresh memory.
    lengths: Box<[AtomicU32]>,
}

/// A tool section as a compile made it: its tools, their template values and
/// documentation, and the fuel and bytes it spent, which a compile that takes it spends again.
pub struct ToolSection {
    pub tools: CompiledTools,
    /// `TOOLS_DATA`: each tool as a template value.
    pub values: Value,
    /// `TOOLS_TEXT`: the tools documented by the tool format.
    pub text: Value,
    pub fuel: u64,
    pub bytes: u64,
}

impl RenderMemo {
    /// The memo of a compiler of these templates.
    pub fn new(templates: &Templates) -> Self {
        Self {
            reads: templates.ids().map(|_| Reads::default()).collect(),
            later_reads: RwLock::default(),
            renders: BoundedMemo::new(MAX_HELD_BYTES),
            tool_values: BoundedMemo::new(MAX_HELD_BYTES),
            tool_sections: BoundedMemo::new(MAX_HELD_BYTES),
            lengths: templates.ids().map(|_| AtomicU32::new(0)).collect(),
        }
    }

    /// The room a render of `template` starts with: as long as its last render, within
    /// `limit` (the render may not grow past it anyway) and [`MAX_EXPECTED_LENGTH`].
    pub fn expected_length(&self, template: TemplateId, limit: u64) -> usize {
        let last = self
            .lengths
            .get(template.index())
            .map_or(0, |length| length.load(Ordering::Relaxed));
        usize::try_from(u64::from(last).min(limit).min(MAX_EXPECTED_LENGTH)).unwrap_or(0)
    }

    /// Notes the length of a render of `template`, for the next one (see `expected_length`).
    pub fn rendered_length(&self, template: TemplateId, length: usize) {
        if let Some(slot) = self.lengths.get(template.index()) {
            slot.store(u32::try_from(length).unwrap_or(u32::MAX), Ordering::Relaxed);
        }
    }
}

/// The names a template reads, sorted.
type Names = Arc<[String]>;

/// A template's slot in [`RenderMemo::reads`].
#[derive(Default)]
struct Reads {
    /// Found at its first render; `None` when they cannot be known from its text.
    names: OnceLock<Option<Names>>,
    /// Its renders are no longer remembered (see `forget`).
    forgotten: AtomicBool,
}

/// A template and the values of the names it reads, written out.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    template: TemplateId,
    values: Box<[u8]>,
}

/// A render's text and the fuel it spent.
#[derive(Clone, Debug)]
pub struct Remembered {
    pub text: Arc<str>,
    pub fuel: u64,
    /// The slots of filled sections the render read (see `scope::SlotReads`): the same
    /// values read lead the same way through the template, to the same slots.
    pub slots: Arc<[String]>,
}

impl RenderMemo {
    /// The key of rendering `template` over `values`; `None` when such a render is not
    /// remembered. `given` is a name whose value the caller has written out already (a tool,
    /// from its fields, which is cheaper than walking it as a template value).
    pub fn key(
        &self,
        templates: &Templates,
        template: TemplateId,
        values: &Value,
        given: Option<(&str, &[u8])>,
    ) -> Option<Key> {
        let reads = self.reads_of(templates, template)?;
        let mut out = Vec::with_capacity(512);
        let mut given_read = None;
        for name in reads.iter() {
            if let Some((given_name, bytes)) = given
                && given_name == name
            {
                given_read = Some(bytes);
                continue;
            }
            let written = values
                .get_attr(name)
                .ok()
                .and_then(|value| write_value(&value, MAX_KEY_BYTES, &mut out));
            if written.is_none() {
                if out.len() > MAX_KEY_BYTES {
                    self.forget(template);
                }
                return None;
            }
        }
        if let Some(bytes) = given_read {
            out.push(GIVEN);
            write_bytes(bytes, &mut out);
        }
        Some(Key {
            template,
            values: out.into_boxed_slice(),
        })
    }

    pub fn get(&self, key: &Key) -> Option<Remembered> {
        self.renders.get(key)
    }

    /// Remembers a render; returns its text, as remembered.
    pub fn insert(&self, key: Key, text: String, fuel: u64, slots: Vec<String>) -> Arc<str> {
        let bytes = key.values.len() + text.len() + slots.iter().map(String::len).sum::<usize>();
        let text: Arc<str> = Arc::from(text);
        let remembered = Remembered {
            text: Arc::clone(&text),
            fuel,
            slots: slots.into(),
        };
        self.renders.insert(key, remembered, bytes);
        text
    }

    /// The template value of the tool written out as `written`, made by `make` the first time.
    pub fn tool_value(&self, written: &[u8], make: impl FnOnce() -> Value) -> Value {
        if let Some(value) = self.tool_values.get(written) {
            return value;
        }
        let value = make();
        self.tool_values
            .insert(written.into(), value.clone(), 2 * written.len());
        value
    }

    /// From now on, `template` renders every time.
    /// The tool section remembered under `key` (see `Renderer::tools`).
    pub fn tool_section(&self, key: &[u8]) -> Option<Arc<ToolSection>> {
        self.tool_sections.get(key)
    }

    /// Remembers a tool section; counted by its key, its documentation, and twice its tools
    /// written out (`tools_written`, every field, schemas included): once for the tools, once
    /// for their template values.
    pub fn insert_tool_section(&self, key: Box<[u8]>, section: ToolSection, tools_written: usize) {
        let documented = section.text.as_str().map_or(0, str::len);
        let bytes = key.len() + documented + 2 * tools_written;
        self.tool_sections.insert(key, Arc::new(section), bytes);
    }

    /// The bytes counted for the tool sections kept.
    #[cfg(test)]
    pub fn tool_sections_held(&self) -> usize {
        self.tool_sections.held_bytes()
    }

    fn forget(&self, template: TemplateId) {
        match self.reads.get(template.index()) {
            Some(reads) => reads.forgotten.store(true, Ordering::Relaxed),
            None => {
                if let Ok(mut reads) = self.later_reads.write() {
                    reads.insert(template, None);
                }
            }
        }
    }

    /// The names a template reads, sorted; `None` when they cannot be known from its text,
    /// or once its renders are no longer remembered.
    pub fn reads_of(&self, templates: &Templates, template: TemplateId) -> Option<Names> {
        if let Some(reads) = self.reads.get(template.index()) {
            if reads.forgotten.load(Ordering::Relaxed) {
                return None;
            }
            return reads
                .names
                .get_or_init(|| templates.reads(template).map(Arc::from))
                .clone();
        }
        if let Some(known) = self.later_reads.read().ok()?.get(&template) {
            return known.clone();
        }
        // Found without holding the lock, which the other compile threads wait for; what a
        // thread found first (or `forget` decided) stands.
        let found = templates.reads(template).map(Arc::from);
        self.later_reads
            .write()
            .ok()?
            .entry(template)
            .or_insert(found)
            .clone()
    }
}

/// Opens the value of a name the caller wrote out: no value's kind is written as this byte.
const GIVEN: u8 = 0xfe;

/// A tool as the tool format sees it (`tool`), written out from its fields: every field is
/// named, so a field added to the types is a compile error here until it is written too.
pub fn write_tool(tool: &CompiledTool, out: &mut Vec<u8>) {
    let CompiledTool {
        id,
        name,
        spec,
        from_family,
        source:
            SourceRange {
                file,
                first_line,
                last_line,
            },
        description,
        parameters,
        item,
    } = tool;
    for text in [id, name, spec, file, description] {
        write_bytes(text.as_bytes(), out);
    }
    for number in [first_line, last_line] {
        out.extend((*number as u64).to_le_bytes());
    }
    out.push(u8::from(*from_family));
    match item {
        None => out.push(0),
        Some(index) => {
            out.push(1);
            out.extend((*index as u64).to_le_bytes());
        }
    }
    out.extend((parameters.len() as u64).to_le_bytes());
    for parameter in parameters {
        let CompiledParameter {
            name,
            required,
            kind,
            instruction,
            usage,
            note,
            schema,
        } = parameter;
        for text in [name, kind, instruction, usage, note] {
            write_bytes(text.as_bytes(), out);
        }
        out.push(u8::from(*required));
        out.extend((schema.written_len() as u64).to_le_bytes());
        schema.write_json(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The room a render starts with is the template's last length, within the render's
    /// limit and `MAX_EXPECTED_LENGTH`; none for a template never rendered, or for an id
    /// outside the memo's templates.
    #[test]
    fn the_memo_keeps_each_templates_last_length_within_the_limits() {
        let limits = crate::model::Limits::default();
        let mut sources = crate::source::Sources::default();
        let mut templates = Templates::new(None, &limits, &mut sources);
        let mut add = |templates: &mut Templates, name: &str| {
            let file = sources.add(name.into(), "{{ text }}".into());
            templates.add_file(&sources, file).expect("a template")
        };
        let first = add(&mut templates, "first.md");
        let second = add(&mut templates, "second.md");
        let memo = RenderMemo::new(&templates);
        assert_eq!(memo.expected_length(first, 1 << 20), 0);
        memo.rendered_length(first, 20_000);
        assert_eq!(memo.expected_length(first, 1 << 20), 20_000);
        assert_eq!(memo.expected_length(first, 500), 500);
        assert_eq!(memo.expected_length(second, 1 << 20), 0);
        memo.rendered_length(first, 12);
        assert_eq!(memo.expected_length(first, 1 << 20), 12);
        memo.rendered_length(first, 50 << 20);
        assert_eq!(
            memo.expected_length(first, 1 << 30),
            MAX_EXPECTED_LENGTH as usize
        );
        // An id the memo was not made with (not one a compiler meets: it borrows the
        // templates it was made for) gets no room and is not remembered.
        let later = add(&mut templates, "later.md");
        memo.rendered_length(later, 99);
        assert_eq!(memo.expected_length(later, 1 << 20), 0);
    }

    /// However many renders and tools a long run remembers, what is kept stays under the
    /// limit: past it, the memory starts again.
    #[test]
    fn what_is_remembered_stays_bounded() {
        let limits = crate::model::Limits::default();
        let templates = Templates::new(None, &limits, &mut crate::source::Sources::default());
        let memo = RenderMemo::new(&templates);
        let text = "x".repeat(1024 * 1024);
        for index in 0..100u32 {
            let key = Key {
                template: TemplateId::for_tests(index),
                values: index.to_le_bytes().into(),
            };
            memo.insert(key, text.clone(), 1, Vec::new());
            let written = [index.to_le_bytes().as_slice(), text.as_bytes()].concat();
            memo.tool_value(&written, || Value::from(index));
            let renders = memo.renders.held_bytes();
            let tools = memo.tool_values.held_bytes();
            assert!(renders <= MAX_HELD_BYTES && tools <= MAX_HELD_BYTES);
        }
        // The newest are still there.
        let newest = Key {
            template: TemplateId::for_tests(99),
            values: 99u32.to_le_bytes().into(),
        };
        assert_eq!(memo.get(&newest).map(|r| r.text.len()), Some(text.len()));
    }
}
