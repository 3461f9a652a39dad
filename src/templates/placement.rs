//! Which sections reach the prompt. A section's text is in the prompt only where a template
//! reads its slot: the base template, or the template of a section that is itself in the
//! prompt (through what each includes, imports or extends). A section whose slot only a
//! switched-off section reads (`TOOL_USE_GUIDELINES_SECTION` inside a disabled `tool_use`)
//! renders into nothing, and a compile says so rather than counting it.

use std::collections::BTreeSet;

use super::{TemplateId, Templates};

/// For each section of a variant, who reads its slot.
#[derive(Debug)]
pub struct SlotReaders {
    /// Per section: whether the base template reads its slot, and the other sections whose
    /// templates do.
    readers: Vec<(bool, Vec<usize>)>,
    /// Some template names a template it uses by a computed name: any slot may be read
    /// through it, so every section is taken to reach the prompt.
    computed: bool,
    /// Some template calls `debug()`, which writes every name there is, every slot among
    /// them, without reading one by one.
    debug: bool,
}

impl SlotReaders {
    /// The readers of each of `sections` (its template and slot, in the variant's order) in a
    /// variant whose base template is `base`.
    pub fn new(templates: &Templates, base: TemplateId, sections: &[(TemplateId, &str)]) -> Self {
        let mut computed = false;
        let mut debug = false;
        let mut reads = |template: TemplateId| -> BTreeSet<&str> {
            let mut names = BTreeSet::new();
            for used in templates.with_used(template) {
                computed |= templates
                    .references(used)
                    .iter()
                    .any(|reference| reference.name.is_none());
                names.extend(templates.variables(used).iter().map(String::as_str));
            }
            debug |= names.contains("debug");
            names
        };
        let by_base = reads(base);
        let by_section: Vec<BTreeSet<&str>> = sections
            .iter()
            .map(|(template, _)| reads(*template))
            .collect();
        let readers = sections
            .iter()
            .enumerate()
            .map(|(index, (_, slot))| {
                let others = by_section
                    .iter()
                    .enumerate()
                    .filter(|(reader, names)| *reader != index && names.contains(slot))
                    .map(|(reader, _)| reader)
                    .collect();
                (by_base.contains(slot), others)
            })
            .collect();
        Self {
            readers,
            computed,
            debug,
        }
    }

    /// Whether a template of the prompt calls `debug()`: every section it writes is in the
    /// prompt, read by name or not.
    pub fn writes_every_slot(&self) -> bool {
        self.debug
    }

    /// Which sections reach the prompt, of those that render (`rendered`, by index, in the
    /// order they render): read by the base template, or by a section that reaches it and
    /// renders after it (one that renders before reads the slot while it is still empty).
    pub fn placed(&self, rendered: &[bool]) -> Vec<bool> {
        self.placed_given(rendered, true)
    }

    /// [`SlotReaders::placed`], whatever the order they render in: a reader that renders
    /// first places a section too. Validation's view, which warns of that order on its own
    /// (`section-read-before-it-renders`) and need not say it twice.
    pub fn placed_in_any_order(&self, rendered: &[bool]) -> Vec<bool> {
        self.placed_given(rendered, false)
    }

    fn placed_given(&self, rendered: &[bool], in_order: bool) -> Vec<bool> {
        if self.computed {
            return rendered.to_vec();
        }
        let mut placed = vec![false; rendered.len()];
        let mut changed = true;
        while changed {
            changed = false;
            for (index, (by_base, others)) in self.readers.iter().enumerate() {
                let reached = *by_base
                    || others
                        .iter()
                        .any(|&other| (!in_order || other > index) && placed[other]);
                if rendered.get(index) == Some(&true) && !placed[index] && reached {
                    placed[index] = true;
                    changed = true;
                }
            }
        }
        placed
    }

    /// The sections whose templates read section `index`'s slot.
    pub fn readers(&self, index: usize) -> &[usize] {
        self.readers
            .get(index)
            .map_or(&[], |(_, others)| others.as_slice())
    }
}
