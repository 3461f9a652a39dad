//! Every problem promptc can report, with all of its wording in one place.
//!
//! A [`Problem`] says *what* is wrong; a [`crate::diagnostic::Diagnostic`] adds *where*.
//! Keeping the sentences here (and nowhere else) keeps the messages consistent and makes the
//! set of codes easy to review.

mod annotation;
mod definitions;
mod invalid_value;
mod not_read;
mod request;
mod revision;
mod routing;
mod rules;
mod scope_name;
mod syntax;
mod template_help;

use std::fmt;

pub use annotation::{LabelKind, NoteKind};
pub use definitions::{DefinitionProblem, SchemaFault};
pub use invalid_value::{Form, InvalidValue};
pub use not_read::NotRead;
pub use request::RequestProblem;
pub use revision::RevisionProblem;
pub use routing::RoutingProblem;
pub use rules::RulesProblem;
pub use scope_name::{DeclaredName, NotVisible, TakenBy};
pub use syntax::TomlHint;

/// The kind of data file a problem was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Manifest,
    Variant,
    Component,
    Tool,
    Context,
}

impl Kind {
    pub const ALL: [Kind; 5] = [
        Kind::Manifest,
        Kind::Variant,
        Kind::Component,
        Kind::Tool,
        Kind::Context,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Manifest => "manifest",
            Kind::Variant => "variant",
            Kind::Component => "component",
            Kind::Tool => "tool",
            Kind::Context => "context",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a condition's type is named where a value of another type is written for one
/// (`when = false`).
pub const CONDITION_TYPE: &str = "a condition, written as text";

/// What `condition-syntax` says of a `when` of nothing but spaces (`when = ""`).
pub const EMPTY_CONDITION: &str = "it is empty";
/// What it says of any other expression of nothing but spaces (a predicate, a `match`, a
/// `for_each`), which cannot simply be left out.
pub const EMPTY_EXPRESSION: &str = "it is empty, and an expression is needed here";
/// The help for an unknown id holding ` - `: in a YAML file, a list item folded into the one
/// above it (see `report::diagnostics::help_for`, which gives it for YAML files alone).
pub const YAML_FOLDED_ITEM: &str = "YAML took the line below for more of this item's text: it is indented more than the item above it; give every item of the list the same indentation";

/// What a context's `date` is, where a file gives it another type: a date written as text.
pub const DATE_TYPE: &str = "a date, written as text (YYYY-MM-DD)";

/// What names a path into the context that leads nowhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathReader {
    Template,
    /// A template, through a name it sets to an item of a context's list (a loop variable):
    /// `list` is the list's path (`mcp_servers.resources`, an item's as the list's).
    TemplateItem {
        list: String,
        /// Whether `list` goes through a list: else the name stands for the value there
        /// (`{% set b = browser %}`).
        through_list: bool,
    },
    /// A template reading a tool's value (`tool` in a tool format, an item of `tools`), or
    /// one of its parameters.
    ToolValue {
        parameter: bool,
    },
    Condition,
    /// A `for_each` spec's condition, reading the name its item has in the texts.
    ConditionOfItems,
    /// A tool's `for_each` list.
    ForEach,
    /// `tokens.volatile` in promptc.toml.
    VolatileList,
}

/// How bad a problem is: errors fail the run, warnings do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Warning,
    Error,
}

/// What a name refers to, for "unknown X" and "duplicate X" problems.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum RefKind {
    Component,
    Tool,
    Family,
    Variant,
    Parameter,
    SharedParameter,
    Context,
    /// A key of a tool's `families` table, as its `based_on` names one.
    FamilySpec,
}

impl fmt::Display for RefKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RefKind::Component => "component",
            RefKind::Tool => "tool",
            RefKind::Family => "family",
            RefKind::Variant => "variant",
            RefKind::Parameter => "parameter",
            RefKind::SharedParameter => "shared parameter",
            RefKind::Context => "context",
            RefKind::FamilySpec => "family spec",
        })
    }
}

/// The field whose links form a cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CycleLink {
    /// A variant's parent.
    Extends,
    /// A tool family's base family.
    BasedOn,
}

impl fmt::Display for CycleLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CycleLink::Extends => "extends",
            CycleLink::BasedOn => "based_on",
        })
    }
}

/// Whether two different names are the same text once their letters are composed alike
/// (`é` as one character, or `e` and a combining accent).
fn composed_alike(a: &str, b: &str) -> bool {
    use unicode_normalization::UnicodeNormalization as _;
    a != b && a.nfc().eq(b.nfc())
}

/// Long work that stops at the processor-time deadline (see `deadline`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StoppedWork {
    Compiles,
    RoutingExpectations,
    /// A prompt's post-processing rules, at the rule reached.
    Postprocess,
}

/// Each variant is named after its [`Problem::code`], the user-visible name.
/// One context's count in an over-budget error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetCount {
    pub context: String,
    /// What the budget counts: the prompt, with a native variant's tool definitions.
    pub tokens: usize,
    /// For a variant with native tool calls: the prompt's tokens and its definitions'.
    pub parts: Option<(usize, usize)>,
}

/// The filters, tests, functions or statements a template can use: what an unknown one with
/// no near name is told.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownNames {
    /// What the names are, in the plural: `filters`, `tests`, `functions`, `statements`.
    pub what: &'static str,
    /// In name order.
    pub names: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Problem {
    // Reading and parsing.
    EmptyFile {
        /// The text was handed over (standard input, an embedding program's text), not read
        /// from a file of the workspace: there is no file to delete.
        inline: bool,
    },
    NotUtf8,
    TomlSyntax {
        message: String,
        /// The mistake told from the text around the error, when its message fits several.
        hint: Option<TomlHint>,
    },
    YamlSyntax {
        message: String,
    },
    UnsupportedNumber {
        text: String,
    },
    JsonSyntax {
        message: String,
    },
    // Schema.
    UnknownKey {
        key: String,
        /// Shared by every unknown key of one table: a table may expect thousands.
        expected: std::sync::Arc<[String]>,
        /// The expected key closest to `key`, when one is close enough to be a likely typo.
        suggestion: Option<String>,
        /// The table of the same file where `key` is a key, when it is one elsewhere (dotted,
        /// "" for the top level): a key written in the wrong table.
        belongs_in: Option<String>,
        /// Whether the file sets `key` in `belongs_in` already: the key is written twice.
        set_there: bool,
    },
    /// A name declared in a workspace file that another name of the template scope already
    /// has: one would hide the other.
    NameTaken {
        name: String,
        what: DeclaredName,
        taken_by: TakenBy,
    },
    MissingField {
        field: String,
    },
    WrongType {
        expected: String,
        found: String,
        /// The value written as its field takes it, where that is plain (`9000` for
        /// `"9000"`, `["web_fetch"]` for `"web_fetch"`).
        instead: Option<String>,
    },
    /// A value of the right type that its field does not accept; what is wrong with it is
    /// one of several kinds, all under one code.
    InvalidValue(InvalidValue),
    /// `build.out` shares a folder with workspace sources: a build would overwrite them.
    OutputOverlapsSources {
        out: String,
        setting: String,
        folder: String,
    },
    /// An output the build writes lies where a workspace context reads rules files (its
    /// `rules_from` folder's `.clinerules`, `.cursor/rules`, `AGENTS.md`, …): each build would
    /// read the last one's outputs back as rules.
    OutputsReadAsRules {
        /// The output folder, or an entry's output path.
        output: String,
        context: String,
        folder: String,
    },
    /// A context's `rules_from` folder lies in the output folder: the build would read its own
    /// outputs as rules, and the next build would refuse to write over files it reads.
    RulesReadFromOutputs {
        output: String,
        context: String,
        folder: String,
    },
    /// A context file whose name cannot name a context (and its outputs).
    BadContextName {
        name: String,
    },
    // References and structure.
    DuplicateId {
        kind: RefKind,
        name: String,
    },
    UnknownReference {
        kind: RefKind,
        name: String,
        suggestion: Option<String>,
    },
    Cycle {
        link: CycleLink,
        chain: Vec<String>,
    },
    /// An `extends` or `based_on` chain longer than [`crate::follow::MAX_LINKS`] links.
    ChainTooLong {
        link: CycleLink,
    },
    UnusedOverride {
        kind: RefKind,
        name: String,
        variant: String,
    },
    /// An override's `order` past the end of the list (`len` items): the item goes last.
    OrderPastTheEnd {
        kind: RefKind,
        name: String,
        order: usize,
        len: usize,
    },
    /// A variant lists tools, but neither sends them as native definitions nor has a template
    /// that writes them (`TOOLS`, `tools`, `enabled_tools`).
    ToolsNeverWritten {
        variant: String,
        count: usize,
    },
    /// A variant sends its tools as native definitions, and its prompt documents them too.
    ToolsDocumentedTwice {
        variant: String,
        count: usize,
    },
    /// A tool's or component's `[families.F]` entry that no variant takes: no variant of the
    /// family lists it (for a component, or each that does overrides its template; for a
    /// tool, nor does any family whose entry is `based_on` it).
    FamilyEntryUnused {
        kind: RefKind,
        id: String,
        family: String,
    },
    /// A parameter whose `depends_on` tools no variant offering it lists all of: `missing`
    /// are those none of them lists, or, with `together`, every one (each is listed by some,
    /// never all by one).
    ParameterNeverShown {
        tool: String,
        parameter: String,
        missing: Vec<String>,
        together: bool,
    },
    /// A server of the listing beside MCP settings that gives nothing: the settings do not
    /// name it, or the context already has it (`in_context`), whose entry says what it offers.
    ListingEntryUnused {
        name: String,
        in_context: bool,
        suggestion: Option<String>,
    },
    /// A server that MCP settings add, which neither the context nor the listing beside the
    /// settings (`listing`, its file name) describes: the prompt names it and nothing it
    /// offers, since promptc starts no server.
    ServerNotListed {
        name: String,
        listing: String,
    },
    /// A parameter's `schema` table sets a keyword one of the parameter's own fields writes
    /// (`field`): the native definitions took the table's, the prompt the field's.
    SchemaKeyOfAField {
        key: String,
        field: &'static str,
    },
    /// An `add_components` / `add_tools` id that the list it appends to already holds: the
    /// variant's own list (`own`), or the one inherited from `holder`.
    AlreadyListed {
        kind: RefKind,
        name: String,
        field: &'static str,
        holder: String,
        own: bool,
    },
    UndefinedPlaceholder {
        name: String,
        suggestion: Option<String>,
        /// The file of the variant that declares `suggestion`, when no template reads it: the
        /// declaration may be what is misspelt.
        declared_unread: Option<String>,
    },
    /// A name the template only asks about (`is defined`, `default(…)`) that nothing
    /// defines, near one that something does: a misspelt name, whose fallback always applies.
    GuardedNameDefinedNowhere {
        name: String,
        suggestion: String,
    },
    /// An argument of a macro, without a default, undefined where the macro reads it: a call
    /// left it out or passed an undefined value.
    MacroArgumentMissing {
        name: String,
        argument: String,
    },
    /// A name a template calls (`name(…)`) that is no function of templates, nor anything else
    /// the template can read: `known`, the functions it has.
    UnknownFunction {
        name: String,
        suggestion: Option<String>,
        known: Vec<String>,
    },
    /// A TOML file of more tokens than promptc reads (line ends and comments count: its reader
    /// holds every one).
    TooManyTokens {
        limit: usize,
    },
    /// The build matrix writes more outputs than `limits.outputs`.
    TooManyOutputs {
        outputs: usize,
        families: usize,
        contexts: usize,
        entries: usize,
        limit: usize,
    },
    /// A filter templates do not have (`x | uper`), in any branch of a template.
    UnknownFilter {
        name: String,
        suggestion: Option<String>,
        known: Vec<String>,
    },
    /// A test templates do not have (`x is plann`), in any branch of a template.
    UnknownTest {
        name: String,
        suggestion: Option<String>,
        known: Vec<String>,
    },
    UnslottedComponent {
        component: String,
        slot: String,
        /// The variant none of whose templates reads the slot.
        variant: String,
        /// The components whose templates read the slot, none of which is in the variant's
        /// prompt (switched off, or unslotted in turn); empty when no template reads it.
        read_only_by: Vec<String>,
    },
    /// An include, import or extends tag names a template that nothing registers.
    UnknownTemplate {
        /// The tag: `include`, `import` or `extends`.
        tag: &'static str,
        name: String,
        /// `{% include ["a", "b"] %}`: the list's other names, none of which exists either.
        others: Vec<String>,
        suggestion: Option<String>,
        /// A file is there, which promptc did not read as a template (its folder holds too
        /// many files, it is not UTF-8, it lies outside the partials folder, …).
        on_disk: bool,
    },
    /// Templates that include, import or extend each other in a loop; `chain` starts and
    /// ends with the same name.
    TemplateCycle {
        chain: Vec<String>,
    },
    /// An include, import or extends tag whose name is computed: validation cannot follow it.
    ComputedTemplateName {
        tag: &'static str,
    },
    /// A template of the partials folder that no template names.
    UnusedPartial {
        name: String,
    },
    /// A component that no variant lists: it renders in no build (often a list not updated
    /// after a rename).
    UnusedComponent {
        id: String,
    },
    /// A tool that no variant lists: no build offers it.
    UnusedTool {
        id: String,
    },
    /// A path in a folder of data files that is named like one and is not read as one: a
    /// folder, or JSON outside the contexts' folder. It was skipped without a word.
    NotReadAsData {
        path: String,
        why: NotRead,
    },
    /// A component's template reads the section of a component that renders after it in a
    /// variant: the section is empty there, whatever the context.
    SectionReadBeforeItRenders {
        slot: String,
        component: String,
        reader: String,
        /// Every variant where it does, in their order.
        variants: Vec<String>,
        /// Those of `variants` where `component`'s template reads `reader`'s section too:
        /// there, no order renders each before the other.
        mutual_in: Vec<String>,
    },
    /// A section's slot written (`{{ RULES_SECTION }}`) by two templates a variant renders
    /// (its base template and a component's, say): the prompt holds the section twice.
    SectionWrittenTwice {
        slot: String,
        /// The file of the template that writes it first.
        first: String,
        /// Every variant where both render, in their order.
        variants: Vec<String>,
    },
    /// A template or condition asks whether `enabled_tools` holds a name no tool of the
    /// workspace has as its id (a tool renamed, a typo): the answer is always no.
    ToolNeverEnabled {
        name: String,
        suggestion: Option<String>,
    },
    /// A tool's text or a tool format reads a section's slot: they render before every
    /// section, so it is "" there. `tool` is the tool whose text reads it (none for a tool
    /// format, or a shared parameter's text).
    SectionReadByTools {
        slot: String,
        tool: Option<String>,
    },
    /// A condition, or a side of its `and` or `or`, that is quoted text (`'plan'`,
    /// `"false"`): a constant, true whenever the text is not empty, whatever the context says.
    ConditionIsText {
        /// As written, quotes included.
        written: String,
        /// What the text always is as a condition: true unless empty.
        holds: bool,
    },
    /// A condition that is a table of the context (`focus_chain`), true whenever the table
    /// has a key: `field` is the boolean field it likely meant.
    ConditionOnATable {
        path: String,
        field: Option<String>,
        /// Written `not <path>`.
        negated: bool,
    },
    /// A template reads the section of a component that no variant it renders in lists:
    /// the section is always empty there.
    SectionNeverRendered {
        slot: String,
        component: String,
    },
    /// Both `template` and `template_file` are set.
    TemplateConflict,
    /// `expected_file`: the file that would be picked up by default, where there is one.
    MissingTemplate {
        expected_file: Option<String>,
        /// A file beside the expected one whose name is near (`capability.md` for
        /// `capabilities.md`) and that is no other file's template.
        near: Option<String>,
    },
    TemplateFileMissing {
        path: String,
        /// The file beside it whose name is nearest, if one is near.
        suggestion: Option<String>,
        /// Whether a field names it (`template_file`), or it is a component's `<id>.md`.
        named: bool,
    },
    /// A variant lists a component that has no default template and none for its family.
    NoFamilyTemplate {
        component: String,
        family: String,
    },
    PathEscapesWorkspace {
        path: String,
        /// The folder setting whose default `path` is, when the manifest does not set it.
        default_of: Option<String>,
        /// Written inside the workspace (relative, no `..`): a link on its way leads out.
        through_link: bool,
    },
    /// An absolute path to a file or folder of the workspace: paths are read relative to the
    /// file that names them (the manifest's, to the workspace). `relative` is the same place
    /// written so.
    AbsolutePath {
        path: String,
        relative: String,
    },
    /// An MCP settings file with both `mcpServers` and VS Code's `servers`: an agent reads one
    /// of them, so the servers of the other were dropped without a word.
    ServerTablesConflict,
    /// Two data folder settings name one folder, or one below the other: each kind's load
    /// reads every data file below its folder, so each read the other's files as its own
    /// (dozens of errors, each with a help that did not fit).
    FoldersOverlap {
        setting: String,
        folder: String,
        other: String,
        other_folder: String,
    },
    /// A folder setting that names a place in the repository's `.git` folder.
    PathInGitFolder {
        setting: String,
        path: String,
    },
    /// A file promptc will not read: a link out of the workspace, a FIFO, too large, ….
    PathRefused {
        path: String,
        reason: String,
        help: String,
    },
    TemplateSyntax {
        message: String,
        /// The near name of a filter, test, function or statement the message names.
        meant: Option<String>,
        /// The names of its kind the environment has, when it has none near the one the
        /// message names.
        known: Option<KnownNames>,
        /// The keyword of the block that the template leaves open (`if`, `set`, …), when the
        /// template ends before that block's end tag; or the opener (`{%`, `{{`) of a tag
        /// whose end is missing, read on into the text after it.
        left_open: Option<String>,
    },
    ConditionSyntax {
        message: String,
        /// The near name of a filter, test, function or statement the message names.
        meant: Option<String>,
        /// The names of its kind the environment has, when it has none near the one the
        /// message names.
        known: Option<KnownNames>,
    },
    UnknownContextField {
        path: String,
        suggestion: Option<String>,
        /// What names the path.
        reader: PathReader,
        /// The fields of the table the path goes into (`enabled`, `viewport` for
        /// `browser.nope`), said when no field is near.
        fields: Vec<String>,
    },
    /// A name of the scope read where it is not defined yet (a later predicate, or
    /// `enabled_tools` in a tool's condition).
    NotYetDefined {
        name: String,
        reason: NotVisible,
    },
    InvalidRegex {
        message: String,
    },
    /// A regex rule's replacement reads a group its pattern does not have (`groups` groups,
    /// `$0` the whole match; `names` those with a name).
    UnknownGroup {
        group: String,
        groups: usize,
        names: Vec<String>,
        suggestion: Option<String>,
    },
    /// A `$` in a regex rule's replacement that starts no group reference (`$é`, `${` left
    /// open, `$` before a space): the regex engine keeps it as it is, which a `$$` says.
    LiteralDollar {
        /// What follows the `$`, a few characters of it.
        after: String,
        /// The pattern's group of that name, which `${name}` reads.
        group: Option<String>,
    },
    /// A condition compares a context field with a value it never holds (`mode == 'Plan'`,
    /// `browser.viewport.width > '800'` aside: `==` and `!=` only): the comparison is always
    /// false (`==`) or always true (`!=`).
    NeverEqual {
        /// The comparison as written.
        comparison: String,
        path: String,
        /// What the field holds: `one of act, plan`, `a number`, `text`, `true or false`.
        holds: String,
        /// Whether the comparison is `!=` (always true).
        unequal: bool,
        /// The value meant, when one of the field's is near the one written.
        suggestion: Option<String>,
    },
    // Compiling one prompt.
    RenderFailed {
        message: String,
        /// The near name of a filter, test, function or statement the message names.
        meant: Option<String>,
        /// The names of its kind the environment has, when it has none near the one the
        /// message names.
        known: Option<KnownNames>,
    },
    ConditionFailed {
        message: String,
        /// The near name of a filter, test, function or statement the message names.
        meant: Option<String>,
        /// The names of its kind the environment has, when it has none near the one the
        /// message names.
        known: Option<KnownNames>,
        /// The path the condition reads that the scope does not have (`extra.team`), when
        /// that is why it failed.
        undefined: Option<String>,
    },
    NoDate {
        /// SOURCE_DATE_EPOCH is set, but to no date.
        epoch_invalid: bool,
    },
    NoVariant {
        family: String,
    },
    DuplicateSlot {
        slot: String,
        component: String,
        other: String,
    },
    /// Prompts of one family over its budget.
    OverBudget {
        family: String,
        budget: usize,
        /// Counts past this are not told exactly: a count above it reads "over" it.
        cap: usize,
        encoding: &'static str,
        /// Whether the encoding is the family's own tokenizer (else counts are estimates).
        exact: bool,
        /// Each context over budget with its tokens, worst first.
        contexts: Vec<BudgetCount>,
        /// The largest top-level sections of the worst context, with their tokens.
        largest: Vec<(String, usize)>,
    },
    VolatileEarly {
        /// The outputs (`family × context`) where the value sits early, in matrix order.
        outputs: Vec<String>,
        /// How far into the prompt, in percent, the first volatile value sits (the least over
        /// the outputs).
        percent: usize,
        section: Option<String>,
        /// The value changes the native tool definitions, which are sent before the prompt:
        /// nothing of the request is cacheable.
        in_definitions: bool,
        /// What reads the value is a `when` (a section's or a tool's): what is switched on
        /// and off per request, not a value written out.
        at_condition: bool,
        volatile: Vec<String>,
        /// The workspace makes this lint an error (`tokens.stable_prefix_level`).
        error: bool,
    },
    /// The stable-prefix probe (a second compile with every volatile value changed) did not
    /// compile, so where the first volatile value sits is not known.
    StablePrefixUnchecked {
        /// The outputs (`family × context`) whose probe failed, in matrix order.
        outputs: Vec<String>,
        /// What stopped the probe: its first problem.
        reason: String,
        /// The workspace makes the stable-prefix lint an error.
        error: bool,
    },
    /// The process used most of its processor time (`PROMPTC_TIME_LIMIT`): the compiles left
    /// were not made, so that the command ends with a word rather than by the signal.
    ProcessorTimeSpent {
        /// The processor time, in milliseconds, past which long work stops.
        spent_ms: u64,
        /// The work that stopped.
        stopped: StoppedWork,
    },
    /// A compile's templates ran more instructions than its fuel allows.
    OutOfFuel {
        fuel: u64,
    },
    /// The conditions of a compile (or of a route) together ran more than its fuel allows.
    ConditionsOutOfFuel {
        fuel: u64,
    },
    /// The workspace's templates and conditions hold more code (text inside `{{ … }}` and
    /// `{% … %}`, and conditions) than a workspace may: this one goes past it.
    TooMuchCode {
        limit: u64,
    },
    /// A template built more text than a byte limit allows; `setting` names the limit.
    TooMuchText {
        limit: u64,
        setting: &'static str,
    },
    /// The tools' parameter schemas, with the compile's text, came to more than
    /// `limits.compile_bytes`: `bytes` is the schema of the parameter where they did.
    SchemasTooLarge {
        limit: u64,
        bytes: u64,
    },
    /// A post-processing rule made the prompt longer than `limits.compile_bytes`.
    PostprocessGrows {
        limit: u64,
    },
    /// A post-processing regex that can only be searched state by state over this prompt,
    /// for more fuel than the compile had left; `per_kib` is what a KiB of text costs so.
    PostprocessOutOfFuel {
        fuel: u64,
        per_kib: u64,
        /// Finding the groups its replacement writes (`$1`) ran out, not the search.
        groups: bool,
    },
    /// Choosing a variant: versions, labels, tags, model routing.
    Routing(RoutingProblem),
    /// Native tool definitions: names and schemas a provider rejects.
    Definitions(DefinitionProblem),
    /// Reading the user's rules files: the rule concerned is skipped.
    Rules(RulesProblem),
    /// A `for_each` expression whose value is not a list.
    ForEachNotAList {
        found: String,
    },
    /// A `for_each` list longer than the tools one spec may make.
    ForEachTooLong {
        limit: usize,
    },
    /// A post-processing rule past the first few, whose passes over the prompt cost fuel,
    /// found less of the compile's fuel left than its pass costs.
    PostprocessPassOutOfFuel {
        fuel: u64,
        free: usize,
    },
    /// A data file holds more values than promptc keeps in memory, alone or with the files
    /// read before it (`together`).
    TooManyValues {
        limit: usize,
        together: bool,
    },
    /// The file's keys, each written out with the keys it is nested in (the place of every
    /// value), are longer together than promptc keeps (`limit` bytes): a few kilobytes of
    /// long keys nested deep, around a long list, took gigabytes.
    KeysTooLong {
        limit: usize,
    },
    /// A family that no output of the build matrix compiles (`build.families` lists others,
    /// and no build entry names it): `validate`, `check` and `build --all` never compile it.
    FamilyNeverBuilt {
        family: String,
    },
    /// The workspace's contexts (or variants), each merged with what it extends, hold more
    /// than the workspace's byte limit together.
    InheritsTooMuch {
        kind: RefKind,
        limit: u64,
    },
    /// Two tools offered under one name.
    ToolNameTaken {
        name: String,
        first: String,
        /// One of the two is a tool of a context's MCP server, named by its server.
        mcp: bool,
    },
    /// A tool name (from a `for_each` item) a model cannot call.
    BadToolName {
        name: String,
    },
    /// A key of a context's `extra` (which declares no keys) named like one of the context's
    /// own fields: it sets `extra.<key>`, not the field.
    ExtraKeyIsAField {
        key: String,
    },
    /// A value set by name (`--set N=3`, a request's `set`) that does not read as the type of
    /// the placeholder it replaces: a text `false` is true to every `if`, a text `3` doubles
    /// to `33`. `from` says where the type comes from (a variant's declaration, where the
    /// diagnostic is placed; a standard placeholder's own; the context's value).
    SetValueDoesNotFit {
        name: String,
        text: String,
        expected: crate::model::PlaceholderKind,
        from: crate::model::KindFrom,
        /// Where JSON written for a list or table stops reading, and why.
        reason: Option<String>,
    },
    /// A context placeholder no template or condition can read: no variant declares it, and
    /// it is no standard placeholder nor slot, so it replaces nothing and changes no prompt.
    PlaceholderUnread {
        name: String,
        suggestion: Option<String>,
    },
    /// A variant placeholder named like a key of the variant file's top level: written after
    /// the `[placeholders]` header, it sets a placeholder and leaves the variant's key unset.
    PlaceholderIsAKey {
        key: String,
    },
    /// A file's problems past the most one file is reported with, or (`files`: in how many
    /// files) those past the most one run reports: how many of them are errors and how many
    /// warnings.
    MoreProblems {
        shown: usize,
        errors: usize,
        warnings: usize,
        files: Option<usize>,
    },
}

impl Problem {
    /// A dotted TOML key (`a.b.c = 1`, `[a.b.c]`) of more parts than the TOML reader nests;
    /// the reader's own words ("recursion limit") neither say which key nor what to do.
    pub fn toml_key_too_deep(parts: usize, limit: usize) -> Problem {
        Problem::TomlSyntax {
            message: format!(
                "this dotted key has {parts} parts, more than the {limit} a key may have: nest fewer levels"
            ),
            hint: None,
        }
    }

    /// A key a TOML table sets twice, or (`table`) a `[table]` header opened twice: at the
    /// second, with the line of the first. The reader's own words ("duplicate key") say
    /// neither which key nor where it was first.
    pub fn toml_duplicate(key: &str, first_line: usize, table: bool) -> Problem {
        let message = if table {
            format!(
                "duplicate table `{key}`: it is opened already on line {first_line}; write its keys there"
            )
        } else {
            format!("duplicate key `{key}`: it is set already on line {first_line}; keep one")
        };
        Problem::TomlSyntax {
            message,
            hint: None,
        }
    }

    /// A `[table]` header for a key an earlier `[[key]]` made an array of tables: each item of
    /// the array is added with `[[key]]`.
    pub fn toml_table_for_array(key: &str, first_line: usize) -> Problem {
        Problem::TomlSyntax {
            message: format!(
                "`[{key}]` opens a table, and `{key}` is already an array of tables (`[[{key}]]` on line {first_line}): write `[[{key}]]` to add an item to it"
            ),
            hint: None,
        }
    }

    /// A key a YAML mapping holds twice: at the second, with the line of the first, and how
    /// the first was written when it differs (`1` and `0x1` read as one key).
    pub fn yaml_duplicate_key(
        key: &str,
        first_line: usize,
        first_written: Option<&str>,
    ) -> Problem {
        let message = match first_written {
            None => {
                format!("duplicate key `{key}`: it is set already on line {first_line}; keep one")
            }
            Some(written) => format!(
                "duplicate key `{key}`: `{written}` on line {first_line} reads as the same key (a key is the value it is read as); keep one"
            ),
        };
        Problem::YamlSyntax { message }
    }

    /// A second merge key (`<<`) in one YAML mapping, with the line of the first.
    pub fn yaml_second_merge(first_line: usize) -> Problem {
        Problem::YamlSyntax {
            message: format!(
                "duplicate key `<<`: line {first_line} merges into this mapping already; merge several mappings with one key, `<<: [*first, *second]`"
            ),
        }
    }

    /// A `.toml` file written as YAML (`id: intro`): the TOML reader's own words ("key with no
    /// value, expected `=`") do not say that the whole file is in another format.
    pub fn toml_looks_like_yaml() -> Problem {
        Problem::TomlSyntax {
            message: "this file looks like YAML (`key: value`), and a `.toml` file is read as TOML: rename it to `.yaml`, or write its keys as TOML (`key = value`)".into(),
            hint: None,
        }
    }

    /// A stable, kebab-case name, printed with the message and in JSON output.
    pub fn code(&self) -> &'static str {
        match self {
            Problem::EmptyFile { .. } => "empty-file",
            Problem::NotUtf8 => "not-utf8",
            Problem::TomlSyntax { .. } => "toml-syntax",
            Problem::YamlSyntax { .. } => "yaml-syntax",
            Problem::UnsupportedNumber { .. } => "unsupported-number",
            Problem::JsonSyntax { .. } => "json-syntax",
            Problem::UnknownKey { .. } => "unknown-key",
            Problem::MissingField { .. } => "missing-field",
            Problem::WrongType { .. } => "wrong-type",
            Problem::InvalidValue(_) => "invalid-value",
            Problem::NameTaken { .. } => "name-taken",
            Problem::BadContextName { .. } => "bad-context-name",
            Problem::OutputOverlapsSources { .. } => "output-overlaps-sources",
            Problem::OutputsReadAsRules { .. } => "outputs-read-as-rules",
            Problem::RulesReadFromOutputs { .. } => "rules-read-from-outputs",
            Problem::DuplicateId { .. } => "duplicate-id",
            Problem::UnknownReference { .. } => "unknown-reference",
            Problem::Cycle { .. } => "cycle",
            Problem::ChainTooLong { .. } => "chain-too-long",
            Problem::UnusedOverride { .. } => "unused-override",
            Problem::AlreadyListed { .. } => "already-listed",
            Problem::ListingEntryUnused { .. } => "listing-entry-unused",
            Problem::ServerNotListed { .. } => "server-not-listed",
            Problem::SchemaKeyOfAField { .. } => "schema-key-of-a-field",
            Problem::ToolsNeverWritten { .. } => "tools-never-written",
            Problem::ToolsDocumentedTwice { .. } => "tools-documented-twice",
            Problem::FamilyEntryUnused { .. } => "family-entry-unused",
            Problem::ParameterNeverShown { .. } => "parameter-never-shown",
            Problem::OrderPastTheEnd { .. } => "order-past-the-end",
            Problem::UndefinedPlaceholder { .. } => "undefined-placeholder",
            Problem::GuardedNameDefinedNowhere { .. } => "guarded-name-defined-nowhere",
            Problem::UnknownFunction { .. } => "unknown-function",
            Problem::UnknownFilter { .. } => "unknown-filter",
            Problem::UnknownTest { .. } => "unknown-test",
            Problem::MacroArgumentMissing { .. } => "macro-argument-missing",
            Problem::UnslottedComponent { .. } => "unslotted-component",
            Problem::UnknownTemplate { .. } => "unknown-template",
            Problem::TemplateCycle { .. } => "template-cycle",
            Problem::ComputedTemplateName { .. } => "computed-template-name",
            Problem::UnusedPartial { .. } => "unused-partial",
            Problem::UnusedComponent { .. } => "unused-component",
            Problem::UnusedTool { .. } => "unused-tool",
            Problem::NotReadAsData { .. } => "not-read-as-data",
            Problem::SectionReadBeforeItRenders { .. } => "section-read-before-it-renders",
            Problem::SectionWrittenTwice { .. } => "section-written-twice",
            Problem::SectionNeverRendered { .. } => "section-never-rendered",
            Problem::SectionReadByTools { .. } => "section-read-by-tools",
            Problem::ToolNeverEnabled { .. } => "tool-never-enabled",
            Problem::ConditionOnATable { .. } => "condition-on-a-table",
            Problem::ConditionIsText { .. } => "condition-is-text",
            Problem::TemplateConflict => "template-conflict",
            Problem::MissingTemplate { .. } => "missing-template",
            Problem::NoFamilyTemplate { .. } => "no-family-template",
            Problem::TemplateFileMissing { .. } => "template-file-missing",
            Problem::PathEscapesWorkspace { .. } => "path-escapes-workspace",
            Problem::PathInGitFolder { .. } => "path-in-git-folder",
            Problem::AbsolutePath { .. } => "absolute-path",
            Problem::ServerTablesConflict => "server-tables-conflict",
            Problem::FoldersOverlap { .. } => "folders-overlap",
            Problem::PathRefused { .. } => "path-refused",
            Problem::TemplateSyntax { .. } => "template-syntax",
            Problem::ConditionSyntax { .. } => "condition-syntax",
            Problem::UnknownContextField { .. } => "unknown-context-field",
            Problem::NotYetDefined { .. } => "not-yet-defined",
            Problem::InvalidRegex { .. } => "invalid-regex",
            Problem::UnknownGroup { .. } => "unknown-group",
            Problem::LiteralDollar { .. } => "literal-dollar",
            Problem::NeverEqual { .. } => "never-equal",
            Problem::RenderFailed { .. } => "render-failed",
            Problem::ConditionFailed { .. } => "condition-failed",
            Problem::NoDate { .. } => "no-date",
            Problem::NoVariant { .. } => "no-variant",
            Problem::DuplicateSlot { .. } => "duplicate-slot",
            Problem::OverBudget { .. } => "over-budget",
            Problem::VolatileEarly { .. } => "volatile-early",
            Problem::StablePrefixUnchecked { .. } => "stable-prefix-unchecked",
            Problem::ProcessorTimeSpent { .. } => "processor-time-spent",
            Problem::Routing(routing) => routing.code(),
            Problem::Definitions(problem) => problem.code(),
            Problem::Rules(rules) => rules.code(),
            Problem::ForEachNotAList { .. } => "for-each-not-a-list",
            Problem::ForEachTooLong { .. } => "for-each-too-long",
            Problem::InheritsTooMuch { .. } => "inherits-too-much",
            Problem::TooManyValues { .. } => "too-many-values",
            Problem::KeysTooLong { .. } => "keys-too-long",
            Problem::FamilyNeverBuilt { .. } => "family-never-built",
            Problem::TooManyTokens { .. } => "too-many-tokens",
            Problem::TooManyOutputs { .. } => "too-many-outputs",
            Problem::PostprocessPassOutOfFuel { .. } => "postprocess-pass-out-of-fuel",
            Problem::ToolNameTaken { .. } => "tool-name-taken",
            Problem::BadToolName { .. } => "bad-tool-name",
            Problem::OutOfFuel { .. } => "out-of-fuel",
            Problem::ConditionsOutOfFuel { .. } => "conditions-out-of-fuel",
            Problem::TooMuchText { .. } => "too-much-text",
            Problem::TooMuchCode { .. } => "too-much-code",
            Problem::MoreProblems { .. } => "more-problems",
            Problem::ExtraKeyIsAField { .. } => "extra-key-is-a-field",
            Problem::PlaceholderUnread { .. } => "placeholder-unread",
            Problem::SetValueDoesNotFit { .. } => "set-value-does-not-fit",
            Problem::PlaceholderIsAKey { .. } => "placeholder-is-a-key",
            Problem::PostprocessGrows { .. } => "postprocess-grows",
            Problem::SchemasTooLarge { .. } => "schemas-too-large",
            Problem::PostprocessOutOfFuel { .. } => "postprocess-out-of-fuel",
        }
    }

    /// How early in the pipeline the problem is found: a file that cannot be read (0) or
    /// does not fit its schema (1) is the cause of whatever later checks (2) would say about
    /// it, so reports list problems in this order.
    pub fn stage(&self) -> u8 {
        match self {
            Problem::EmptyFile { .. }
            | Problem::TooManyValues { .. }
            | Problem::KeysTooLong { .. }
            | Problem::TooManyTokens { .. }
            | Problem::NotUtf8
            | Problem::TomlSyntax { .. }
            | Problem::YamlSyntax { .. }
            | Problem::UnsupportedNumber { .. }
            | Problem::JsonSyntax { .. }
            | Problem::TemplateSyntax { .. }
            | Problem::ConditionSyntax { .. }
            // The cause of what the loads of the overlapping folders say.
            | Problem::FoldersOverlap { .. } => 0,
            Problem::UnknownKey { .. }
            | Problem::MissingField { .. }
            | Problem::WrongType { .. }
            | Problem::InvalidValue(_)
            | Problem::TemplateFileMissing { .. }
            | Problem::MissingTemplate { .. } => 1,
            _ => 2,
        }
    }

    pub fn severity(&self) -> Severity {
        match self {
            Problem::UnusedOverride { .. }
            | Problem::AlreadyListed { .. }
            | Problem::ListingEntryUnused { .. }
            | Problem::ServerNotListed { .. }
            | Problem::ToolsNeverWritten { .. }
            | Problem::ToolsDocumentedTwice { .. }
            | Problem::FamilyEntryUnused { .. }
            | Problem::ParameterNeverShown { .. }
            | Problem::OrderPastTheEnd { .. }
            | Problem::LiteralDollar { .. }
            | Problem::NeverEqual { .. }
            | Problem::UnslottedComponent { .. }
            | Problem::GuardedNameDefinedNowhere { .. }
            | Problem::ComputedTemplateName { .. }
            | Problem::UnusedPartial { .. }
            | Problem::UnusedComponent { .. }
            | Problem::UnusedTool { .. }
            | Problem::FamilyNeverBuilt { .. }
            | Problem::NotReadAsData { .. }
            | Problem::SectionReadBeforeItRenders { .. }
            | Problem::SectionWrittenTwice { .. }
            | Problem::SectionNeverRendered { .. }
            | Problem::SectionReadByTools { .. }
            | Problem::ToolNeverEnabled { .. }
            | Problem::ConditionOnATable { .. }
            | Problem::ConditionIsText { .. }
            | Problem::VolatileEarly { error: false, .. }
            | Problem::StablePrefixUnchecked { error: false, .. } => Severity::Warning,
            Problem::Routing(routing) => routing.severity(),
            Problem::Definitions(problem) => problem.severity(),
            Problem::Rules(rules) => rules.severity(),
            Problem::MoreProblems { errors: 0, .. }
            | Problem::ExtraKeyIsAField { .. }
            | Problem::PlaceholderUnread { .. }
            | Problem::PlaceholderIsAKey { .. } => Severity::Warning,
            _ => Severity::Error,
        }
    }

    /// What would fix it, when there is something useful to say.
    pub fn help(&self) -> Option<String> {
        Some(match self {
            // Jinja2's, left out so that a compile is deterministic.
            Problem::UnknownFilter { name, .. } | Problem::UnknownFunction { name, .. }
                if name == "random" =>
            {
                "the same inputs always compile to the same bytes, so templates have no `random`: choose with a value the context gives (`{{ tips[extra.day % (tips | length)] }}`)".into()
            }
            // Jinja2's, left out: they are made for HTML, which a prompt is not.
            Problem::UnknownFilter { name, .. }
                if matches!(
                    name.as_str(),
                    "striptags" | "xmlattr" | "forceescape" | "urlize"
                ) =>
            {
                format!(
                    "prompts are not HTML, so templates have no Jinja2 `{name}`: write the text as the prompt should read, or rewrite it with a `[[postprocess]] rule = \"regex\"` clean-up rule"
                )
            }
            Problem::UnknownTest { name, .. } if name == "callable" => {
                "templates have no Jinja2 `callable` test: test what the value holds (`is mapping`, `is string`, `is defined`) instead".into()
            }
            Problem::UnknownFunction { name, .. } if name == "lipsum" => {
                "the same inputs always compile to the same bytes, so templates have no `lipsum`: write the filler text itself".into()
            }
            Problem::EmptyFile { inline: false } => {
                "write the file's fields, or delete the file".into()
            }
            Problem::EmptyFile { inline: true } => {
                "give the context's fields, as JSON, TOML or YAML (`{}` keeps every default)".into()
            }
            Problem::NotUtf8 => "save the file as UTF-8".into(),
            Problem::UnsupportedNumber { text } => syntax::unsupported_number_help(text),
            Problem::TomlSyntax { message, hint } => syntax::toml_help(message, hint.as_ref())?,
            Problem::YamlSyntax { message } => syntax::yaml_help(message)?,
            Problem::JsonSyntax { message } => syntax::json_help(message)?,
            Problem::TemplateSyntax {
                meant: Some(meant), ..
            }
            | Problem::ConditionSyntax {
                meant: Some(meant), ..
            }
            | Problem::RenderFailed {
                meant: Some(meant), ..
            }
            | Problem::ConditionFailed {
                meant: Some(meant), ..
            } => format!("did you mean `{meant}`?"),
            // A model version is the only plain object a template meets (`model_version`'s):
            // minijinja names it so when an operation it has no meaning for is asked of it.
            Problem::RenderFailed { message, .. } | Problem::ConditionFailed { message, .. }
                if message.contains("plain object") =>
            {
                "a model version (`model_version`) is no number for arithmetic: `| int` gives its major version (4 for 4.10), `| float` the version as a decimal (2.5; 4.10 reads 4.1); to order versions, compare the version itself (`>= 4.2`, `> \"4.9\"`)".into()
            }
            Problem::RenderFailed { message, .. } if message.starts_with("undefined value") => {
                // minijinja's detail names the value: "`extra.team` is undefined".
                let Some(path) = message.split('`').nth(1).filter(|path| !path.is_empty()) else {
                    // No name: the value came from an expression (`list | first`), which a
                    // context's unset value is only one way to make undefined.
                    return Some(
                        "an expression here gives an undefined value: a filter that found nothing (`first` or `last` of an empty list, a `selectattr` no item passes), a key its value lacks, or a value a context may leave unset; test it first (`{% if value is defined %}`, with the expression set to a name), or give it a default (`| default(…)`)".into(),
                    );
                };
                if matches!(path, "loop.previtem" | "loop.nextitem") {
                    let turn = if path == "loop.previtem" { "first" } else { "last" };
                    return Some(format!(
                        "`{path}` is undefined on the loop's {turn} turn: ask whether it is defined (`{path} is defined`), not whether it is true"
                    ));
                }
                format!(
                    "a value a context may leave unset: test it first (`{{% if {path} is defined %}}`), or give it a default (`{path} | default(…)`); an `extra` key can be declared in promptc.toml's `[context_fields]` with a default"
                )
            }
            Problem::TemplateSyntax {
                known: Some(known), ..
            }
            | Problem::ConditionSyntax {
                known: Some(known), ..
            }
            | Problem::RenderFailed {
                known: Some(known), ..
            }
            | Problem::ConditionFailed {
                known: Some(known), ..
            } => {
                let names: Vec<String> = known.names.iter().map(|name| format!("`{name}`")).collect();
                format!("the {} a template can use: {}", known.what, names.join(", "))
            }
            Problem::TemplateSyntax {
                left_open: Some(keyword),
                ..
            } => template_help::left_open(keyword),
            Problem::ConditionSyntax { message, .. } if message == EMPTY_CONDITION => {
                "write a condition (`browser.enabled`, `mode == 'plan'`), or delete the key: without one, it always holds".into()
            }
            Problem::ConditionSyntax { message, .. } if message == EMPTY_EXPRESSION => {
                "write the expression it stands for (a predicate's condition, a family's `match`, a `for_each` list's path)".into()
            }
            // A condition is no tag: it ends before an operator's last operand.
            Problem::ConditionSyntax { message, .. }
                if message.starts_with("unexpected end of input, expected expression") =>
            {
                "the condition ends before the operand its last operator needs: finish it (`a and b`, `mode == 'plan'`), or remove the operator".into()
            }
            Problem::TemplateSyntax { message, .. }
            | Problem::ConditionSyntax { message, .. }
            | Problem::RenderFailed { message, .. }
            | Problem::ConditionFailed { message, .. }
                if template_help::help(message).is_some() =>
            {
                template_help::help(message)?
            }
            Problem::ConditionFailed {
                undefined: Some(path),
                ..
            } if path.starts_with("extra.") => format!(
                "a context that sets no `{path}` leaves it undefined: test it first (`{path} is defined and …`), give it a default (`{path} | default(…)`), or declare it in promptc.toml's `[context_fields]` with a default"
            ),
            Problem::ConditionFailed {
                undefined: Some(path),
                ..
            } => format!(
                "test it first (`{path} is defined and …`), or give it a default (`{path} | default(…)`)"
            ),
            Problem::UnknownKey {
                key,
                belongs_in: Some(table),
                set_there: true,
                ..
            } => {
                let there = if table.is_empty() {
                    "the file's top level".to_string()
                } else {
                    format!("`{table}`")
                };
                format!(
                    "`{key}` is a key of {there}, which sets it already: remove this one, or move its value there in place of the other"
                )
            }
            // A field of the top level misspelt in a table of free keys (`mcp_server` below a
            // context's `[extra]`): the suggestion is none of the table's own keys.
            Problem::UnknownKey {
                belongs_in: Some(table),
                suggestion: Some(near),
                expected,
                ..
            } if table.is_empty() && !expected.contains(near) => format!(
                "did you mean `{near}`, a key of the file's top level? Write it there (in TOML, above the first `[table]` header)"
            ),
            Problem::UnknownKey {
                key,
                belongs_in: Some(table),
                ..
            } if table.is_empty() => format!(
                "`{key}` is a key of the file's top level: move it there (in TOML, above the first `[table]` header)"
            ),
            Problem::UnknownKey {
                key,
                belongs_in: Some(table),
                ..
            } => format!("`{key}` is a key of `{table}`: move it there"),
            Problem::UnknownKey {
                suggestion: Some(suggestion),
                ..
            } => format!("did you mean `{suggestion}`?"),
            Problem::UnknownKey { expected, .. } if !expected.is_empty() => {
                // A long list is cut, the count kept: each unknown key says it.
                const NAMED: usize = 32;
                let mut names = expected[..expected.len().min(NAMED)].join(", ");
                if expected.len() > NAMED {
                    names.push_str(&format!(" and {} more", expected.len() - NAMED));
                }
                format!("expected one of: {names}")
            }
            Problem::UnknownKey { .. } => "remove this key".into(),
            // The value written, quoted: `when = true` was told to write `"false"`.
            Problem::WrongType {
                expected,
                found,
                instead,
            } if expected == CONDITION_TYPE && found != "null" => {
                let example = instead.as_deref().unwrap_or("\"yolo\"");
                format!(
                    "write the condition in quotes, as text (`{example}`, `\"mode == 'plan'\"`)"
                )
            }
            // In YAML, a key whose contents are not indented below it is a key with nothing
            // after it: null.
            Problem::WrongType {
                instead: Some(instead),
                ..
            } => format!("write `{instead}`"),
            Problem::WrongType { expected, found, .. } if found == "null" && expected.starts_with("a table") => {
                "indent what belongs under the key, or leave the key out to use its default (YAML's `~` or nothing after a key is null, which is not a value here)".into()
            }
            Problem::WrongType { expected, .. } if expected == DATE_TYPE => {
                "write the date in quotes, year, month and day joined by `-` (`date = \"2026-02-03\"`)".into()
            }
            Problem::WrongType { expected, found, .. }
                if expected == "a string"
                    && ["a number", "an integer", "a boolean"].contains(&found.as_str()) =>
            {
                "write the value in quotes to make it text (`\"1.10\"`, `\"true\"`)".into()
            }
            Problem::WrongType { expected, found, .. }
                if expected == "an integer"
                    && ["a number", "a number written as a float"].contains(&found.as_str()) =>
            {
                "write a whole number, without a decimal point or an exponent (`100000`, not `100000.0` or `1e5`)".into()
            }
            Problem::WrongType { expected, found, .. }
                if ["an integer", "a number"].contains(&expected.as_str()) && found == "a string" =>
            {
                "write the number without quotes (`9000`, not `\"9000\"`; YAML 1.2 reads `9_000` and `0b101` as text too)".into()
            }
            // YAML's `yes`, `no`, `on` and `off` are text (YAML 1.2), as in TOML and JSON.
            Problem::WrongType { expected, found, .. }
                if expected == "a boolean" && found == "a string" =>
            {
                "write `true` or `false`, without quotes (`yes`, `no`, `on` and `off` are text in YAML 1.2, as in TOML and JSON)".into()
            }
            Problem::WrongType { found, .. } if found == "null" => {
                "leave the key out to use its default (TOML has no null, and YAML's `~` is not a value here)".into()
            }
            Problem::InvalidValue(invalid) => return invalid.help(),
            Problem::Routing(routing) => return routing.help(),
            Problem::Definitions(problem) => return problem.help(),
            Problem::Rules(rules) => return rules.help(),
            Problem::ForEachNotAList { .. } => {
                "give `for_each` a list from the context, such as `extra.subagents`".into()
            }
            Problem::PostprocessPassOutOfFuel { .. } => format!(
                "use fewer `[[postprocess]]` rules (one regex rule can do the work of several), or raise `fuel` in promptc.toml (at most {})",
                crate::model::limits::MAX_FUEL
            ),
            Problem::TooManyTokens { .. } => {
                "split the file into smaller ones, or take out the blank lines and comments that make up most of it".into()
            }
            Problem::TooManyOutputs { .. } => {
                "build fewer families or contexts together (`[build] families = [...]`, `contexts = [...]`), or raise `limits.outputs` in promptc.toml (at most 50000)".into()
            }
            Problem::TooManyValues { .. } => {
                "each value read takes hundreds of bytes of memory: keep long listings (an MCP server's tools, a long list) out of the workspace's files, or split what is repeated into fewer, larger values (a list of lines as one text)".into()
            }
            Problem::KeysTooLong { .. } => {
                "nest the values less deeply, or give the keys they are nested in shorter names".into()
            }
            Problem::FamilyNeverBuilt { family } => format!(
                "add `{family}` to `build.families` in promptc.toml (or name it in a `[[build.entries]]` entry), or leave `families` out of `[build]` to build every family"
            ),
            Problem::InheritsTooMuch { kind, .. } => format!(
                "extend a smaller {kind} (move what only some {kind}s need into a {kind} of their own), or raise `limits.workspace_bytes` in promptc.toml"
            ),
            Problem::ForEachTooLong { .. } => {
                "offer fewer tools: filter the list in the expression (`extra.agents | selectattr(\"enabled\")`), or split it between specs".into()
            }
            Problem::ToolNameTaken { mcp: true, .. } => {
                "an MCP tool's name in the definitions is what `tool_definitions.mcp_name` makes of its server's name and its own: rename the server in the context's `mcp_servers`, change `mcp_name`, or give the workspace's tool another `name`".into()
            }
            Problem::ToolNameTaken { .. } => {
                "give the tools different names (a `for_each` tool's name from its item, such as `use_{{ item.name }}`)".into()
            }
            Problem::BadToolName { .. } => {
                "build the name from letters, digits, `_`, `.` and `-`, starting with a letter or `_`".into()
            }
            Problem::NameTaken { what, .. } => format!("rename the {what}"),
            Problem::OutputOverlapsSources {
                out,
                setting,
                folder,
            } => format!(
                "keep the two folders apart: point `{setting}` at a folder outside `{out}` (or, if `{folder}` is where it belongs, set `build.out` to a folder outside it)"
            ),
            Problem::RulesReadFromOutputs {
                output, folder, ..
            } => format!(
                "read rules from a folder outside `{output}` (the project's own, not what promptc writes), or set `build.out` to a folder apart from `{folder}`"
            ),
            Problem::OutputsReadAsRules {
                context, folder, ..
            } => format!(
                "write the outputs outside the rules locations of `{folder}` (`.clinerules`, `.cursor/rules`, `AGENTS.md`, `.cursorrules`, `.windsurfrules`), or name another folder in context `{context}`'s `rules_from`"
            ),
            Problem::BadContextName { .. } => {
                "rename the file: a context's name is its file name without the extension".into()
            }
            Problem::MissingField { field } => format!("add `{field}`"),
            // YAML reads a line indented one more space than the item above as more of its
            // text: `- intro` then ` - outro` is the one item `intro - outro`.
            Problem::UnknownReference { name, .. } if name.contains(" - ") => {
                YAML_FOLDED_ITEM.into()
            }
            Problem::UndefinedPlaceholder {
                name,
                suggestion: Some(suggestion),
                declared_unread: Some(file),
            } => format!(
                "did you mean `{suggestion}`? It is declared in `{file}` and no template reads it: if the declaration is what is misspelt, rename it there to `{name}`"
            ),
            Problem::UnknownReference {
                suggestion: Some(suggestion),
                ..
            }
            | Problem::UndefinedPlaceholder {
                suggestion: Some(suggestion),
                ..
            }
            | Problem::UnknownFunction {
                suggestion: Some(suggestion),
                ..
            }
            | Problem::UnknownFilter {
                suggestion: Some(suggestion),
                ..
            }
            | Problem::UnknownTest {
                suggestion: Some(suggestion),
                ..
            }
            | Problem::UnknownContextField {
                suggestion: Some(suggestion),
                ..
            } => format!("did you mean `{suggestion}`?"),
            // `extra` holds the keys `[context_fields]` declares, once it declares any.
            Problem::UnknownContextField {
                path,
                reader,
                suggestion: None,
                ..
            } if path.starts_with("extra.") && path.matches('.').count() == 1 => {
                let key = &path["extra.".len()..];
                let kind = if *reader == PathReader::ForEach {
                    "array\", default = []"
                } else {
                    "string\""
                };
                format!(
                    "declare it in promptc.toml's `[context_fields]` (`{key} = {{ type = \"{kind} }}`): with fields declared there, a context's `extra` holds those alone"
                )
            }
            // YAML 1.1's truth words, which YAML 1.2 (and a condition) reads as names.
            Problem::UnknownContextField {
                path,
                suggestion: None,
                ..
            } if matches!(
                path.to_ascii_lowercase().as_str(),
                "yes" | "no" | "on" | "off" | "y" | "n"
            ) =>
            {
                let truth = matches!(path.to_ascii_lowercase().as_str(), "yes" | "on" | "y");
                format!(
                    "`{path}` is a name here, not a truth value: a condition's are `true` and `false` (in YAML, in quotes: `\"{truth}\"`), and a `when` that always holds can be left out"
                )
            }
            // A name alone that nothing declares: what would declare it.
            Problem::UnknownContextField {
                path,
                reader,
                suggestion: None,
                ..
            } if !path.contains('.')
                && !matches!(
                    reader,
                    PathReader::VolatileList | PathReader::ConditionOfItems
                ) =>
            {
                format!(
                "declare it in promptc.toml: a predicate over the context (`[predicates] {path} = \"mcp_servers | length > 0\"`), a field each context sets (`[context_fields] {path} = {{ type = \"boolean\" }}`, then read as `extra.{path}`), or a placeholder"
                )
            }
            // No near name below a table of the context: the fields it has (a name alone may
            // have been meant as a predicate or placeholder as well).
            Problem::UnknownContextField { path, fields, .. } if !fields.is_empty() => {
                let (parent, _) = path.rsplit_once('.')?;
                let names: Vec<String> = fields.iter().map(|name| format!("`{name}`")).collect();
                format!("the fields of `{parent}`: {}", names.join(", "))
            }
            Problem::UnknownReference {
                kind: RefKind::Family,
                ..
            } => "families are declared by the `family` of a variant".into(),
            // Named before it is written: the command that writes it.
            Problem::UnknownReference {
                kind: kind @ (RefKind::Tool | RefKind::Component),
                name,
                ..
            } if crate::model::is_valid_id(name) => format!(
                "`promptc new {kind} {name}` writes it, or leave it out of the list"
            ),
            Problem::UnknownReference {
                kind: RefKind::FamilySpec,
                ..
            } => "`based_on` names another key of the tool's `families` table, whose spec this one starts from".into(),
            Problem::MacroArgumentMissing { name, argument } => format!(
                "pass `{argument}` a defined value where `{name}` is called (`{name}(…)`, or `{name}({argument}=…)`), or give it a default on the macro's line (`{{% macro {name}({argument}='…') %}}`)"
            ),
            Problem::UnknownFunction { known, .. } => {
                let names: Vec<String> = known.iter().map(|name| format!("`{name}`")).collect();
                format!("the functions a template can call: {}", names.join(", "))
            }
            Problem::UnknownFilter { known, .. } => {
                let names: Vec<String> = known.iter().map(|name| format!("`{name}`")).collect();
                format!("the filters a template can use: {}", names.join(", "))
            }
            Problem::UnknownTest { known, .. } => {
                let names: Vec<String> = known.iter().map(|name| format!("`{name}`")).collect();
                format!("the tests a template can use: {}", names.join(", "))
            }
            // Jinja's macros collect extra arguments in these; minijinja's do not.
            Problem::UndefinedPlaceholder { name, .. } if name == "varargs" || name == "kwargs" => {
                "minijinja's macros have no `varargs` or `kwargs`: name each argument the macro takes, with a default for those a call may leave out (`{% macro m(a, b=none) %}`)".into()
            }
            Problem::GuardedNameDefinedNowhere { suggestion, .. } => format!(
                "did you mean `{suggestion}`? (a name left undefined on purpose, for a request to set, can be declared in the variant's `placeholders` with its fallback as its value)"
            ),
            Problem::UndefinedPlaceholder { .. } => {
                "define it in the variant's `placeholders` (a context's `placeholders` or `--set` can then replace it), or list the component that provides it"
                    .into()
            }
            Problem::Cycle { link, .. } => format!("remove one of the `{link}` links"),
            Problem::ChainTooLong { link } => format!(
                "inherit from fewer levels: copy what the chain sets into one of the files it passes through and point `{link}` there"
            ),
            Problem::UnusedOverride { .. } => {
                "add the id to the variant's list, or delete the override".into()
            }
            Problem::ListingEntryUnused {
                suggestion: Some(meant),
                ..
            } => format!("did you mean `{meant}`, a server the settings name?"),
            Problem::OrderPastTheEnd { len, .. } => format!(
                "write `order = {len}` to place it last, or the position it should take"
            ),
            Problem::FamilyEntryUnused {
                kind: RefKind::Component,
                id,
                family,
            } => format!(
                "list `{id}` in the components of a `{family}` variant (without a template override of it), or delete the entry"
            ),
            Problem::FamilyEntryUnused { id, family, .. } => format!(
                "list `{id}` in the tools of a `{family}` variant, or delete the entry"
            ),
            Problem::ParameterNeverShown {
                tool,
                missing,
                together: false,
                ..
            } => format!(
                "list {} beside `{tool}` in the variants that should show it, or take {} out of its `depends_on`",
                quoted_list(missing),
                if missing.len() == 1 { "it" } else { "them" }
            ),
            Problem::ParameterNeverShown { tool, .. } => format!(
                "list them all beside `{tool}` in one variant, or drop what it need not depend on"
            ),
            Problem::ToolsDocumentedTwice { .. } => {
                "switch off, in this variant, the sections that document the tools (`[overrides.components.tool_list]` with `enabled = false`), or give it a template without `{{ TOOLS }}`; the prompt may still say how to use them".into()
            }
            Problem::ToolsNeverWritten { .. } => {
                "write `{{ TOOLS }}` in the base template (or a component's), set `native_tools = true` to send them as tool definitions, or list no tools".into()
            }
            Problem::UnknownGroup {
                suggestion: Some(meant),
                ..
            } => format!("did you mean `${{{meant}}}`?"),
            Problem::LiteralDollar {
                group: Some(group),
                ..
            } => format!("write `${{{group}}}` for the group named so (a name of letters other than ASCII needs the braces), or `$$` for a dollar sign"),
            Problem::LiteralDollar { .. } => {
                "write `$$` for a dollar sign, as it is kept now, or `${name}` for a group".into()
            }
            Problem::NeverEqual {
                path,
                unequal,
                suggestion: Some(meant),
                ..
            } => {
                let op = if *unequal { "!=" } else { "==" };
                format!("did you mean `{path} {op} '{meant}'`?")
            }
            Problem::NeverEqual { path, holds, .. } => {
                format!("compare `{path}` with {holds}, which it holds")
            }
            Problem::UnknownGroup {
                group,
                groups,
                names,
                ..
            } => {
                let digits = group.bytes().take_while(u8::is_ascii_digit).count();
                let (number, rest) = group.split_at(digits);
                let named = if names.is_empty() {
                    String::new()
                } else {
                    format!(", and by name {}", names.iter().map(|n| format!("`${{{n}}}`")).collect::<Vec<_>>().join(", "))
                };
                let known = if *groups > 1 {
                    format!(
                        "the pattern's groups are `$0` (the whole match) to `${}`{named}",
                        groups - 1
                    )
                } else {
                    "the pattern has no groups: `$0` is the whole match".to_string()
                };
                if digits > 0 && !rest.is_empty() && number.parse::<usize>().is_ok_and(|n| n < *groups) {
                    format!("a name runs on over letters, digits and `_`: write `${{{number}}}{rest}` for group {number} followed by `{rest}`")
                } else {
                    format!("{known}; write `$$` for a dollar sign")
                }
            }
            Problem::ListingEntryUnused {
                name,
                in_context: false,
                ..
            } => format!("add `{name}` under `mcpServers` in the settings, or remove it from the listing"),
            Problem::ListingEntryUnused { name, .. } => format!(
                "remove `{name}` from the listing, or from the context's `mcp_servers` to take what the listing offers"
            ),
            Problem::SchemaKeyOfAField { key, field } => format!(
                "remove `{key}` from `schema` and give it as the parameter's own `{field}`, which both the prompt and the tool definitions read"
            ),
            Problem::ServerNotListed { name, listing } => format!(
                "write what it offers under `servers.{name}` in `{listing}` beside the settings (its `tools`, `resources`, `prompts`), or give the context a server `{name}` that lists them"
            ),
            Problem::AlreadyListed { name, field, .. } => format!(
                "remove `{name}` from `{field}`; to move it, give it an `order` override instead"
            ),
            Problem::UnslottedComponent {
                slot, read_only_by, ..
            } if read_only_by.is_empty() => {
                format!("read `{{{{ {slot} }}}}` in the base template or in a component's, or leave the component out (`enabled = false` in the variant's overrides)")
            }
            Problem::UnslottedComponent { slot, .. } => {
                format!("leave the component out too (`enabled = false` in the variant's overrides), or read `{{{{ {slot} }}}}` in a template the prompt renders")
            }
            Problem::UnknownTemplate { on_disk: true, .. } => {
                "a template is a file of the partials folder (`paths.partials`, default `partials`) or one a component or variant uses; where the file is one, the problem reported at it or its folder (too many files, not UTF-8, too large) is why it was not read".into()
            }
            Problem::UnknownTemplate {
                name,
                suggestion: Some(suggestion),
                ..
            } if composed_alike(name, suggestion) => format!(
                "the file `{suggestion}` has the same letters composed otherwise (one name in Unicode's NFC form, the other in NFD, as some systems write file names): rename the file, or write the name as the file's is"
            ),
            Problem::UnknownTemplate {
                suggestion: Some(suggestion),
                ..
            } => format!("did you mean `{suggestion}`?"),
            Problem::UnknownTemplate {
                suggestion: None, ..
            } => "name a file of the partials folder (`paths.partials`, default `partials`) or a template a component or variant uses, by its path from the workspace root".into(),
            Problem::TemplateCycle { .. } => {
                "remove one of the tags, or move what both need into a partial of its own".into()
            }
            Problem::ComputedTemplateName { .. } => {
                "name the template with a string literal (`\"partials/<file>\"`), or pick among literal names with `{% if %}`".into()
            }
            Problem::UnusedPartial { .. } => {
                "include, import or extend it from a template, or delete it".into()
            }
            Problem::TemplateFileMissing {
                path,
                suggestion: Some(near),
                ..
            } if composed_alike(
                path.rsplit('/').next().unwrap_or(path),
                near.rsplit('/').next().unwrap_or(near),
            ) =>
            {
                format!(
                    "the file `{near}` has the same letters composed otherwise (one name in Unicode's NFC form, the other in NFD, as some systems write file names): rename the file, or write the name as the file's is"
                )
            }
            Problem::TemplateFileMissing {
                suggestion: Some(near),
                ..
            } => format!("did you mean `{near}`?"),
            Problem::TemplateFileMissing {
                suggestion: None,
                named: true,
                ..
            } => "create the file, or name one that exists (the path is from the folder of the file that names it)".into(),
            Problem::TemplateFileMissing { named: false, .. } => {
                "make it a file of the component's template, or give the component `template` or `template_file`".into()
            }
            Problem::UnusedComponent { id } => format!(
                "list `{id}` in a variant's `components` (or `add_components`), or delete it"
            ),
            Problem::NotReadAsData { path, why: NotRead::Json } => format!(
                "write it in TOML or YAML (`{}.toml`): JSON is for contexts, which machines write",
                path.strip_suffix(".json").unwrap_or(path)
            ),
            Problem::NotReadAsData { why: NotRead::Folder, .. } => {
                "rename the folder, or make it the file it is named for".into()
            }
            Problem::NotReadAsData { path, why: NotRead::Case } => {
                let at = path.rfind('.').unwrap_or(path.len());
                format!(
                    "name it with the extension in lower case (`{}{}`)",
                    &path[..at],
                    path[at..].to_lowercase()
                )
            }
            Problem::NotReadAsData { why: NotRead::More { .. }, .. } => {
                "see the paths named above, which are the first in name order".into()
            }
            Problem::UnusedTool { id } => {
                format!("list `{id}` in a variant's `tools` (or `add_tools`), or delete it")
            }
            Problem::ToolNeverEnabled {
                suggestion: Some(suggestion),
                ..
            } => format!("did you mean `{suggestion}`?"),
            Problem::ToolNeverEnabled { .. } => "name a tool by its id (its file's `id`), or remove the test".into(),
            Problem::SectionReadByTools { .. } => "write what depends on the section in a component's template, or decide it on what the section depends on (a context field, a predicate): the tools are documented before any section renders, so that sections can show them".into(),
            Problem::SectionReadBeforeItRenders {
                component,
                reader,
                variants,
                mutual_in,
                ..
            } if !mutual_in.is_empty() => {
                let no_order = format!(
                    "`{component}` reads `{reader}`'s section too, so no order renders each before the other: keep one of the two reads (text both need can go in a partial that both include)"
                );
                if mutual_in.len() == variants.len() {
                    no_order
                } else {
                    format!(
                        "list `{component}` before `{reader}` in the variant's `components`; in {}, {no_order}",
                        variant_list(mutual_in)
                    )
                }
            }
            Problem::SectionWrittenTwice { slot, .. } => format!(
                "remove one of the two `{{{{ {slot} }}}}`: a section is written once, where it belongs in the prompt"
            ),
            Problem::SectionReadBeforeItRenders {
                component, reader, ..
            } => format!(
                "list `{component}` before `{reader}` in the variant's `components`, or give it an `order` override that places it before (as where `add_components` adds it): a section's template sees the sections rendered before it"
            ),
            Problem::ConditionOnATable {
                path,
                field: Some(field),
                negated,
            } => format!(
                "did you mean `{}{path}.{field}`?",
                if *negated { "not " } else { "" }
            ),
            Problem::ConditionOnATable {
                path, field: None, ..
            } => {
                format!("compare one of `{path}`'s fields, such as `{path}.<field> == …`")
            }
            Problem::ConditionIsText { .. } => {
                "write the condition without quotes: a name or a comparison (`yolo`, `mode == 'plan'`, `false`); quotes make text, for a comparison's other side".into()
            }
            Problem::SectionNeverRendered { component, .. } => format!(
                "list `{component}` in the `components` of the variants this template renders in, or stop reading its section"
            ),
            Problem::TemplateConflict => "keep either `template` or `template_file`".into(),
            Problem::MissingTemplate {
                expected_file: Some(file),
                near: Some(near),
            } => format!(
                "rename `{near}` beside it to the file promptc reads, `{file}` (or name it in `template_file`); or add `template`"
            ),
            Problem::MissingTemplate {
                expected_file: Some(file),
                ..
            } => format!("add `template`, `template_file`, or a file `{file}`"),
            Problem::MissingTemplate {
                expected_file: None,
                ..
            } => {
                "add `template` (inline) or `template_file` (a path relative to this file)".into()
            }
            Problem::NoFamilyTemplate { component, family } => format!(
                "give `[families.{family}]` a template in component `{component}`, override its template in the variant, or give the component a default template"
            ),
            Problem::PathEscapesWorkspace {
                path,
                default_of: Some(setting),
                ..
            } => format!(
                "`{path}` is a link to a place outside the workspace: make it a folder of the workspace, or set `{setting}` in promptc.toml to one"
            ),
            Problem::PathEscapesWorkspace {
                path,
                default_of: None,
                through_link: true,
            } => format!(
                "`{path}`, or a folder on its way, is a symbolic link to a place outside the workspace: make it a file or folder of the workspace, or name one"
            ),
            Problem::PathEscapesWorkspace {
                default_of: None, ..
            } => "use a path relative to the file that stays inside the workspace".into(),
            Problem::AbsolutePath { relative, .. } => format!(
                "write `{relative}`, the same place relative to the file that names it"
            ),
            Problem::ServerTablesConflict => {
                "keep the servers under one of `mcpServers` and `servers`: move the others there"
                    .into()
            }
            Problem::FoldersOverlap { setting, other, .. } => format!(
                "give `{setting}` a folder of its own, apart from `{other}`'s (the defaults are `variants`, `components`, `tools`, `examples/contexts` and `schema`)"
            ),
            Problem::PathInGitFolder { .. } => {
                "promptc neither reads nor writes the repository's .git folder: choose another folder".into()
            }
            Problem::PathRefused { help, .. } => help.clone(),
            Problem::DuplicateSlot { .. } => "give one of them its own `slot`".into(),
            Problem::DuplicateId {
                kind: RefKind::Parameter,
                ..
            } => "rename one of the two parameters, or remove the one not meant".into(),
            Problem::DuplicateId {
                kind: RefKind::Context,
                ..
            } => "rename one of the two files (a context's name is its file name without the extension), or delete the one not meant".into(),
            Problem::DuplicateId { .. } => {
                "rename one of the two (its `id`), or remove the one not meant; in a list, remove the repeated id".into()
            }
            Problem::NotYetDefined {
                reason: NotVisible::BeforeRouting,
                ..
            } => "route on the context's fields (`model.id`, `model.provider`, …) or a predicate over them".into(),
            Problem::NotYetDefined {
                reason: NotVisible::InDialectRule,
                ..
            } => "choose the dialect by the context's fields (`model.provider`, …), a predicate, or `family`".into(),
            Problem::NotYetDefined {
                reason: NotVisible::BeforeRenders,
                ..
            } => "decide on what the section or the tools depend on: a context field, a predicate, or (in a component's or parameter's condition) `enabled_tools`".into(),
            Problem::NotYetDefined {
                reason: NotVisible::EnabledToolsInToolCondition,
                ..
            } => "a tool's `when` reads the context and the predicates; which tools are enabled is for a parameter's `depends_on` and the templates".into(),
            Problem::NotYetDefined {
                reason: NotVisible::ItsOwnPredicate,
                ..
            } => "write what it stands for with the context's fields and the predicates declared before it (`mode == 'plan'`)".into(),
            Problem::NotYetDefined { .. } => {
                "reorder the predicates, or write the condition out where it is needed".into()
            }
            Problem::NoDate {
                epoch_invalid: true,
            } => "set SOURCE_DATE_EPOCH to the seconds since 1970-01-01 (as `date +%s` prints them), or set `date` in the context file".into(),
            Problem::NoDate { .. } => {
                "set `date` in the context file or the SOURCE_DATE_EPOCH environment variable"
                    .into()
            }
            Problem::OverBudget { contexts, .. }
                if contexts.iter().any(|count| count.parts.is_some()) =>
            {
                "shorten the prompt or the tools' texts (a native variant's tool definitions are sent with every request, and its budget counts them), or raise `max_prompt_tokens` if the budget is wrong".into()
            }
            Problem::OverBudget { .. } => {
                "shorten the prompt, or raise `max_prompt_tokens` if the budget is wrong".into()
            }
            Problem::VolatileEarly {
                in_definitions: true,
                ..
            } => {
                "keep values that change per request out of the tools' texts and `when` conditions (the prompt's end is the place for them), or take the name out of `tokens.volatile` if it does not change per request".into()
            }
            Problem::VolatileEarly {
                at_condition: true,
                ..
            } => {
                "what a `when` switches on and off per request changes the prompt from where it stands: move that section or tool's documentation towards the end of the prompt, take the name out of `tokens.volatile` if it does not change per request, or lower `tokens.stable_prefix_percent`".into()
            }
            Problem::VolatileEarly { .. } => {
                "move values that change per request towards the end of the prompt, or lower `tokens.stable_prefix_percent`".into()
            }
            Problem::ProcessorTimeSpent {
                stopped: StoppedWork::RoutingExpectations,
                ..
            } => {
                "if the work is real, raise `PROMPTC_TIME_LIMIT` (seconds, or `none`); routing rules that cost this much per model stop sooner with a lower `fuel` in promptc.toml, and fewer `[[routing.expect]]` models take less time".into()
            }
            Problem::ProcessorTimeSpent {
                stopped: StoppedWork::Postprocess,
                ..
            } => {
                "each rule reads the whole prompt: fewer `[[postprocess]]` rules, or a shorter prompt, take less time; if the work is real, raise `PROMPTC_TIME_LIMIT` (seconds, or `none`)".into()
            }
            Problem::ProcessorTimeSpent { .. } => {
                "if the work is real, raise `PROMPTC_TIME_LIMIT` (seconds, or `none`); a template that loops a long time stops sooner with a lower `fuel` in promptc.toml".into()
            }
            Problem::StablePrefixUnchecked { .. } => {
                "list in `tokens.volatile` only names whose values may change without breaking the templates (a context field, a path into one such as `extra.team`, and a placeholder declared as a number, a boolean, a list or a table change by their types; a placeholder of text becomes another text), or turn the check off with `stable_prefix_level = \"off\"`".into()
            }
            Problem::OutOfFuel { .. } => format!(
                "look for a loop that does not end, one that walks a long list or text on each turn (`in`, `==`, `sort`, a filter: each item, and each 16 bytes of text, an instruction walks costs fuel), or one that makes a new pattern for `matching` or `glob` on each turn (each distinct pattern of a render costs fuel); if the work is real, raise `fuel` in promptc.toml (at most {})",
                crate::model::limits::MAX_FUEL
            ),
            Problem::ConditionsOutOfFuel { .. } => format!(
                "a condition has no loops, but its tests can be costly: look for many distinct patterns given to `matching` or `glob` (each costs fuel to build), or for long lists or texts walked by `in`, `==` or a filter; if the work is real, raise `fuel` in promptc.toml (at most {})",
                crate::model::limits::MAX_FUEL
            ),
            Problem::ExtraKeyIsAField { key } => format!(
                "move `{key}` out of `[extra]` to set the context's own `{key}`; if templates are meant to read `extra.{key}`, declare it in `[context_fields]` of promptc.toml to say so"
            ),
            Problem::PlaceholderUnread {
                suggestion: Some(suggestion),
                ..
            } => format!("did you mean `{suggestion}`?"),
            Problem::SetValueDoesNotFit { name, expected, .. } => {
                format!("set `{name}` to {}", expected.example())
            }
            Problem::PlaceholderUnread { .. } => "a context's placeholder replaces a value templates read: a placeholder of a variant, a standard placeholder (`CWD`, …) or a section slot; declare it in a variant's `placeholders` for templates to read it, or remove it".into(),
            Problem::PlaceholderIsAKey { key } => format!(
                "to set the variant's own `{key}`, move it above the `[placeholders]` header (in TOML, every key after a header belongs to that table); if templates are meant to read a placeholder of this name, rename it"
            ),
            Problem::MoreProblems { .. } => "fix the problems shown and run again: the rest are reported then, or were the same mistake made many times".into(),
            Problem::TooMuchCode { .. } => "code takes tens of times its size in memory once parsed: keep long lists and texts as data (a context's `extra`, a file a template includes as text) rather than as literals in templates and conditions".into(),
            Problem::TooMuchText { setting, .. } => format!(
                "look for text repeated or joined many times; if the size is real, raise `{setting}` in promptc.toml (at most {} bytes)",
                crate::model::limits::MAX_BYTES
            ),
            Problem::PostprocessOutOfFuel { groups: true, .. } => format!(
                "write a replacement without groups (`$0`, the whole match, costs nothing), match shorter spans, or raise `fuel` in promptc.toml (at most {})",
                crate::model::limits::MAX_FUEL
            ),
            Problem::PostprocessOutOfFuel { .. } => format!(
                "nested repetitions (such as `(?:[0-9]{{0,200}}x){{5}}`) and Unicode word boundaries next to non-ASCII text make the regex engine step through every state of the pattern for each byte of the prompt: simplify the pattern (a `\\b` over non-ASCII text can be `(?-u:\\b)`), or raise `fuel` in promptc.toml (at most {})",
                crate::model::limits::MAX_FUEL
            ),
            Problem::SchemasTooLarge { .. } => format!(
                "each tool that has a parameter writes out its own copy of the parameter's schema (`enum`, `items`, `properties`, `schema`), in native tool definitions and in JSON output, a shared parameter's too: shorten the schema or have fewer tools use it; if the size is real, raise `limits.compile_bytes` in promptc.toml (at most {} bytes)",
                crate::model::limits::MAX_BYTES
            ),
            Problem::PostprocessGrows { .. } => format!(
                "a replacement that holds what it matches grows the text each time the rule applies (and each rule applies to what the rules before it made): match less, or replace with text the pattern does not match; if the size is real, raise `limits.compile_bytes` (at most {} bytes)",
                crate::model::limits::MAX_BYTES
            ),
            _ => return None,
        })
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut message = String::new();
        self.write_message(&mut message)?;
        f.write_str(&shortened_quotes(&message))
    }
}

/// The longest text a message quotes whole, in characters.
const QUOTED_CHARS: usize = 80;
/// The longest message, in characters.
const MESSAGE_CHARS: usize = 2_000;

/// `message` with each quoted text (between backticks) longer than [`QUOTED_CHARS`] cut in
/// its middle, and the whole cut at [`MESSAGE_CHARS`]: a value, key or pattern from a file
/// can be megabytes long, and a message that repeats it would bury the diagnostic (and fill
/// a CI log) where its location already points at it.
fn shortened_quotes(message: &str) -> std::borrow::Cow<'_, str> {
    let long = |text: &str| text.chars().count() > QUOTED_CHARS;
    if message.chars().count() <= QUOTED_CHARS
        || (!message.split('`').any(long) && message.chars().count() <= MESSAGE_CHARS)
    {
        return std::borrow::Cow::Borrowed(message);
    }
    let mut out = String::with_capacity(MESSAGE_CHARS);
    for (index, part) in message.split('`').enumerate() {
        if index > 0 {
            out.push('`');
        }
        if index % 2 == 1 && long(part) {
            out.push_str(&shortened_quote(part));
        } else {
            out.push_str(part);
        }
    }
    if out.chars().count() > MESSAGE_CHARS {
        out = out.chars().take(MESSAGE_CHARS).collect();
        out.push('…');
    }
    std::borrow::Cow::Owned(out)
}

/// `text`, to be quoted, cut in its middle when it is longer than [`QUOTED_CHARS`].
pub fn shortened_quote(text: &str) -> std::borrow::Cow<'_, str> {
    if text.chars().count() <= QUOTED_CHARS {
        return std::borrow::Cow::Borrowed(text);
    }
    let head: String = text.chars().take(QUOTED_CHARS / 2).collect();
    let tail: Vec<char> = text.chars().rev().take(QUOTED_CHARS / 4).collect();
    let mut out = head;
    out.push('…');
    out.extend(tail.into_iter().rev());
    std::borrow::Cow::Owned(out)
}

impl Problem {
    fn write_message(&self, f: &mut String) -> fmt::Result {
        use fmt::Write as _;
        match self {
            Problem::NotYetDefined { name, reason } => {
                write!(f, "`{name}` is not defined here: {reason}")
            }
            Problem::OutputOverlapsSources {
                out,
                setting,
                folder,
            } => write!(
                f,
                "the output folder `{out}` overlaps `{setting}` (`{folder}`): `build --all` would overwrite and delete the workspace's own files"
            ),
            Problem::OutputsReadAsRules {
                output,
                context,
                folder,
            } => write!(
                f,
                "`{output}` lies where context `{context}` reads rules files (its `rules_from` folder `{folder}`): each build would read the last one's outputs back as rules, and `check` would never pass"
            ),
            Problem::RulesReadFromOutputs {
                output,
                context,
                folder,
            } => write!(
                f,
                "context `{context}` reads rules files from `{folder}`, in the output folder `{output}`, which a build writes: rules are the project's own files, and a build would refuse to write over a file the workspace reads"
            ),
            Problem::BadContextName { name } => write!(
                f,
                "`{name}` cannot name a context: it must start with an ASCII letter or digit and hold only those, `_`, `.` and `-`"
            ),
            Problem::EmptyFile { inline: false } => write!(f, "the file is empty"),
            Problem::EmptyFile { inline: true } => write!(f, "the context given is empty"),
            Problem::NotUtf8 => write!(f, "the file is not valid UTF-8"),
            Problem::TomlSyntax { message, .. } => write!(f, "TOML syntax error: {message}"),
            Problem::YamlSyntax { message } => write!(f, "YAML syntax error: {message}"),
            Problem::UnsupportedNumber { text } => {
                write!(f, "the number `{text}` cannot be represented")
            }
            Problem::JsonSyntax { message } => {
                write!(f, "JSON syntax error: {message}")
            }
            Problem::UnknownKey { key, .. } => write!(f, "unknown key `{key}`"),
            Problem::MissingField { field } => write!(f, "missing required field `{field}`"),
            Problem::WrongType {
                expected, found, ..
            } => {
                write!(f, "wrong type: expected {expected}, found {found}")
            }
            Problem::InvalidValue(invalid) => write!(f, "{invalid}"),
            Problem::NameTaken {
                name,
                what,
                taken_by,
            } => write!(
                f,
                "{what} `{name}` has the name of {taken_by}: one would hide the other in templates and conditions"
            ),
            // A parameter is known by its `name`, not an `id`.
            Problem::DuplicateId {
                kind: RefKind::Parameter,
                name,
            } => write!(f, "duplicate parameter name `{name}`"),
            Problem::DuplicateId { kind, name } => write!(f, "duplicate {kind} id `{name}`"),
            Problem::UnknownReference { kind, name, .. } => write!(f, "unknown {kind} `{name}`"),
            Problem::ChainTooLong { link } => write!(
                f,
                "this `{link}` chain goes through more than {} links",
                crate::follow::MAX_LINKS
            ),
            Problem::Cycle { link, chain } => {
                write!(f, "`{link}` forms a cycle: {}", chain.join(" -> "))
            }
            Problem::UnusedOverride {
                kind,
                name,
                variant,
            } => write!(
                f,
                "override of {kind} `{name}`, which variant `{variant}` does not use"
            ),
            Problem::OrderPastTheEnd {
                kind,
                name,
                order,
                len,
            } => write!(
                f,
                "`order = {order}` places {kind} `{name}` past the end of the {len} the list holds: it goes last"
            ),
            Problem::FamilyEntryUnused {
                kind: RefKind::Component,
                id,
                family,
            } => write!(
                f,
                "the `{family}` template of component `{id}` is used by no variant: none of family `{family}` lists the component, or each that does overrides its template"
            ),
            Problem::FamilyEntryUnused { id, family, .. } => write!(
                f,
                "the `{family}` entry of tool `{id}` is used by no variant: none of family `{family}` lists the tool"
            ),
            Problem::ParameterNeverShown {
                tool,
                parameter,
                missing,
                together,
            } => {
                let together = if *together { " together" } else { "" };
                write!(
                    f,
                    "parameter `{parameter}` of tool `{tool}` is in no prompt: it depends on {}, which no variant that offers it lists{together}",
                    quoted_list(missing)
                )
            }
            Problem::ToolsDocumentedTwice { variant, count } => write!(
                f,
                "variant `{variant}` sends its {count} tool(s) as native tool definitions, and its prompt documents them too (`{{{{ TOOLS }}}}`, or a loop over `tools`): the model reads every tool twice, and pays for it in every request"
            ),
            Problem::ToolsNeverWritten { variant, count } => write!(
                f,
                "variant `{variant}` lists {count} tool(s), but no template of it writes them and it sends no native tool definitions: the model never sees them"
            ),
            Problem::ListingEntryUnused {
                name,
                in_context: false,
                ..
            } => write!(
                f,
                "the listing offers server `{name}`, which the MCP settings do not name: nothing of it is used"
            ),
            Problem::ListingEntryUnused { name, .. } => write!(
                f,
                "server `{name}` is in the context already, which says what it offers: the listing's entry for it is not used"
            ),
            Problem::SchemaKeyOfAField { key, field } => write!(
                f,
                "`schema` sets `{key}`, which the parameter's `{field}` writes: the tool definitions would say one thing and the prompt another"
            ),
            Problem::ServerNotListed { name, .. } => write!(
                f,
                "server `{name}` is added with nothing it offers: promptc starts no server, and neither the context nor a listing says what it has"
            ),
            Problem::AlreadyListed {
                kind,
                name,
                field,
                holder,
                own,
            } => {
                let list = if *own {
                    "the variant's own list".to_string()
                } else {
                    format!("the list inherited from `{holder}`")
                };
                write!(
                    f,
                    "{kind} `{name}` is already in {list}: `{field}` leaves it where it is and adds nothing"
                )
            }
            Problem::UndefinedPlaceholder { name, .. } => {
                write!(f, "`{name}` is not defined by anything")
            }
            Problem::GuardedNameDefinedNowhere { name, .. } => write!(
                f,
                "`{name}` is defined by no file of the workspace, so asking whether it is (`is defined`, `default(…)`) gives the fallback unless a request sets it"
            ),
            Problem::UnknownFunction { name, .. } => {
                write!(
                    f,
                    "`{name}` is called, and templates have no function of that name"
                )
            }
            Problem::UnknownFilter { name, .. } => {
                write!(
                    f,
                    "unknown filter `{name}`: a render or condition that reaches it fails"
                )
            }
            Problem::UnknownTest { name, .. } => {
                write!(
                    f,
                    "unknown test `{name}`: a render or condition that reaches it fails"
                )
            }
            Problem::MacroArgumentMissing { name, argument } => write!(
                f,
                "macro `{name}` reads its argument `{argument}`, which is undefined: a call left it out, or passed an undefined value"
            ),
            Problem::UnslottedComponent {
                component,
                slot,
                variant,
                read_only_by,
            } => match &read_only_by[..] {
                [] => write!(
                    f,
                    "component `{component}` is listed in variant `{variant}`, but none of its templates reads `{slot}`: the section never appears"
                ),
                [reader] => write!(
                    f,
                    "component `{component}` is listed in variant `{variant}`, but only `{reader}` reads `{slot}`, and it is not in the variant's prompt: the section never appears"
                ),
                readers => write!(
                    f,
                    "component `{component}` is listed in variant `{variant}`, but only `{}` read `{slot}`, and none of them is in the variant's prompt: the section never appears",
                    readers.join("`, `")
                ),
            },
            Problem::UnknownTemplate {
                tag,
                name,
                on_disk: true,
                ..
            } => write!(
                f,
                "`{tag}` names template `{name}`, a file promptc has not read as a template"
            ),
            Problem::UnknownTemplate {
                tag,
                name,
                suggestion: Some(plain),
                ..
            } if *plain != *name
                && crate::confine::lexical(name).as_os_str() == std::ffi::OsStr::new(plain) =>
            {
                write!(
                    f,
                    "`{tag}` names template `{name}`, and templates are named by their plain path, without `.`, `..` or `//`"
                )
            }
            Problem::UnknownTemplate {
                tag, name, others, ..
            } if others.is_empty() => {
                write!(f, "`{tag}` names template `{name}`, which does not exist")
            }
            Problem::UnknownTemplate {
                tag, name, others, ..
            } => {
                let names: Vec<String> = std::iter::once(name)
                    .chain(others)
                    .map(|name| format!("`{name}`"))
                    .collect();
                write!(
                    f,
                    "`{tag}` names templates {}, none of which exists",
                    names.join(", ")
                )
            }
            Problem::TemplateCycle { chain } => write!(
                f,
                "templates include, import or extend each other in a cycle: {}",
                chain.join(" -> ")
            ),
            Problem::ComputedTemplateName { tag } => write!(
                f,
                "`{tag}` computes its template's name, so validation cannot check or follow it"
            ),
            Problem::UnusedPartial { name } => write!(
                f,
                "partial `{name}` is not included, imported or extended by any template"
            ),
            Problem::UnusedComponent { id } => write!(
                f,
                "component `{id}` is listed by no variant: no build renders it"
            ),
            Problem::NotReadAsData {
                path,
                why: NotRead::Json,
            } => write!(f, "`{path}` is not read: JSON is read for contexts only"),
            Problem::NotReadAsData {
                path,
                why: NotRead::Folder,
            } => write!(
                f,
                "`{path}` is a folder named like a data file: nothing is read from its name \
                 (the data files inside it are read as any folder's)"
            ),
            Problem::NotReadAsData {
                path,
                why: NotRead::Case,
            } => write!(
                f,
                "`{path}` is not read: promptc reads data files whose extension is in lower case (`.toml`, `.yaml`, `.yml`, `.json`)"
            ),
            Problem::NotReadAsData {
                path,
                why: NotRead::More { more },
            } => write!(
                f,
                "{more} more paths under `{path}` are named like data files and not read as \
                 them, besides those named"
            ),
            Problem::UnusedTool { id } => {
                write!(f, "tool `{id}` is listed by no variant: no build offers it")
            }
            Problem::SectionReadByTools {
                slot,
                tool: Some(tool),
            } => write!(
                f,
                "`{slot}` is always empty here: tool `{tool}`'s texts render before every section"
            ),
            Problem::ToolNeverEnabled { name, .. } => write!(
                f,
                "`enabled_tools` never holds `{name}`: no tool of the workspace has that id, so asking for it gives the same answer in every prompt"
            ),
            Problem::SectionReadByTools { slot, tool: None } => write!(
                f,
                "`{slot}` is always empty here: tool formats and shared parameters' texts render before every section"
            ),
            Problem::SectionWrittenTwice {
                slot,
                first,
                variants,
            } => write!(
                f,
                "`{slot}` is written here and in `{first}`: the section appears twice in the prompt of {}",
                variant_list(variants)
            ),
            Problem::SectionReadBeforeItRenders {
                slot,
                component,
                reader,
                variants,
                ..
            } => {
                let list = variant_list(variants);
                write!(
                    f,
                    "`{slot}` is empty here: component `{component}` renders after `{reader}` in {list}"
                )
            }
            Problem::ConditionOnATable { path, .. } => write!(
                f,
                "`{path}` is a table of the context, which is true as a condition whatever its fields say"
            ),
            Problem::ConditionIsText { written, holds } => write!(
                f,
                "`{written}` is quoted text, which as a condition is always {holds} (text is true unless it is empty), whatever the context says"
            ),
            Problem::SectionNeverRendered { slot, component } => write!(
                f,
                "`{slot}` is always empty here: no variant this template renders in lists component `{component}`"
            ),
            Problem::TemplateConflict => {
                write!(f, "both `template` and `template_file` are set")
            }
            Problem::MissingTemplate { .. } => write!(f, "no template is given"),
            Problem::NoFamilyTemplate { component, family } => write!(
                f,
                "component `{component}` has no template for family `{family}`, and no default one"
            ),
            // `template_file = ".."` from a variant at the top of `variants/`.
            Problem::TemplateFileMissing { path, .. } if path.is_empty() => write!(
                f,
                "template file names the workspace's root folder, which is not a file"
            ),
            Problem::TemplateFileMissing { path, .. } => {
                write!(f, "template file `{path}` does not exist or is not a file")
            }
            Problem::PathEscapesWorkspace {
                path,
                default_of: None,
                through_link: false,
            } => write!(f, "path `{path}` leaves the workspace"),
            Problem::PathEscapesWorkspace {
                path,
                default_of: None,
                through_link: true,
            } => write!(f, "path `{path}` leads out of the workspace through a link"),
            Problem::PathEscapesWorkspace {
                path,
                default_of: Some(setting),
                ..
            } => write!(
                f,
                "folder `{path}`, the default `{setting}`, leads out of the workspace"
            ),
            Problem::AbsolutePath { path, .. } => write!(
                f,
                "path `{path}` is absolute: promptc reads paths relative to the file that names them, so that the workspace reads the same wherever it is checked out"
            ),
            Problem::FoldersOverlap {
                setting,
                folder,
                other,
                other_folder,
            } => write!(
                f,
                "`{setting}` (`{folder}`) overlaps `{other}` (`{other_folder}`): each reads every file below its folder, so each would read the other's files as its own"
            ),
            Problem::ServerTablesConflict => write!(
                f,
                "the settings hold both `mcpServers` and `servers`, and an agent reads only one of them"
            ),
            Problem::PathInGitFolder { setting, path } => {
                write!(
                    f,
                    "`{setting}` names `{path}`, in the repository's .git folder"
                )
            }
            Problem::PathRefused { path, reason, .. } => {
                write!(f, "`{path}` {reason}: promptc does not read it")
            }
            Problem::TemplateSyntax { message, .. } => {
                write!(f, "template syntax error: {message}")
            }
            // minijinja says "template" of any text it compiles.
            Problem::ConditionSyntax { message, .. } => write!(
                f,
                "condition does not compile: {}",
                message.replace("template exceeds", "it exceeds")
            ),
            Problem::UnknownContextField {
                path,
                reader: PathReader::TemplateItem { list, through_list },
                ..
            } => {
                if *through_list {
                    write!(
                        f,
                        "template reads `{path}`, which the items of `{list}` do not have"
                    )
                } else {
                    write!(f, "template reads `{path}`, which `{list}` does not have")
                }
            }
            Problem::UnknownContextField {
                path,
                reader: PathReader::ToolValue { parameter },
                ..
            } => {
                let what = if *parameter {
                    "a tool's parameter"
                } else {
                    "a tool's value"
                };
                write!(f, "template reads `{path}`, which {what} does not have")
            }
            Problem::UnknownContextField { path, reader, .. } => {
                let reader = match reader {
                    PathReader::Template
                    | PathReader::TemplateItem { .. }
                    | PathReader::ToolValue { .. } => "template reads",
                    PathReader::Condition | PathReader::ConditionOfItems => "condition reads",
                    PathReader::ForEach => "`for_each` reads",
                    PathReader::VolatileList => "`tokens.volatile` names",
                };
                // A name alone may have been meant as a predicate or a placeholder as well
                // (`has_rule` for `has_rules`).
                if !path.contains('.') {
                    return write!(
                        f,
                        "{reader} `{path}`, which is no context field, predicate or placeholder"
                    );
                }
                write!(f, "{reader} `{path}`, which the context does not have")
            }
            Problem::InvalidRegex { message } => write!(f, "invalid regular expression: {message}"),
            Problem::NeverEqual {
                comparison,
                path,
                holds,
                unequal,
                ..
            } => write!(
                f,
                "`{comparison}` is always {}: `{path}` holds {holds}",
                if *unequal { "true" } else { "false" }
            ),
            Problem::LiteralDollar { after, .. } if after.is_empty() => write!(
                f,
                "the replacement ends with a `$`, which starts no group reference: it is written as a `$`"
            ),
            Problem::LiteralDollar { after, .. } => write!(
                f,
                "the replacement's `$` before `{after}` starts no group reference: it is written as a `$`"
            ),
            Problem::UnknownGroup { group, .. } => write!(
                f,
                "the replacement reads group `{group}`, which the pattern does not have: it would be replaced by nothing"
            ),
            Problem::RenderFailed { message, .. } => write!(f, "rendering failed: {message}"),
            Problem::ConditionFailed {
                undefined: Some(path),
                ..
            } => write!(
                f,
                "condition could not be evaluated: `{path}` is not defined here"
            ),
            Problem::ConditionFailed { message, .. } => {
                write!(f, "condition could not be evaluated: {message}")
            }
            Problem::NoDate {
                epoch_invalid: true,
            } => write!(
                f,
                "the date is not known: the context sets no `date`, and SOURCE_DATE_EPOCH, which would give it, is not a number of seconds from 1970-01-01 to 9999-12-31"
            ),
            Problem::NoDate { .. } => write!(f, "the date is not known"),
            Problem::NoVariant { family } => write!(f, "no variant has family `{family}`"),
            Problem::DuplicateSlot {
                slot,
                component,
                other,
            } => write!(
                f,
                "component `{component}` fills slot `{slot}`, which `{other}` already fills"
            ),
            Problem::OutOfFuel { fuel } => write!(
                f,
                "the templates of this compile ran out of fuel: more than {fuel} instructions and items walked"
            ),
            Problem::ConditionsOutOfFuel { fuel } => write!(
                f,
                "the conditions evaluated for this compile ran out of fuel: together more than {fuel} instructions and items walked"
            ),
            Problem::PlaceholderIsAKey { key } => write!(
                f,
                "`{key}` is written under `placeholders`, so it is a placeholder, not the variant's `{key}`, which is left unset"
            ),
            Problem::SetValueDoesNotFit {
                name,
                text,
                expected,
                from,
                reason,
            } => {
                let declared = match from {
                    crate::model::KindFrom::Variant(variant) => {
                        format!("the variant `{variant}` declares it as")
                    }
                    crate::model::KindFrom::Standard => {
                        "the standard placeholder holds".to_string()
                    }
                    crate::model::KindFrom::Context => "the context gives it as".to_string(),
                };
                write!(
                    f,
                    "`{name}` is set to `{text}`, but {declared} {}",
                    expected.what()
                )?;
                match reason {
                    Some(reason) => write!(f, ", and it does not read {reason}"),
                    None => Ok(()),
                }
            }
            Problem::PlaceholderUnread { name, .. } => write!(
                f,
                "placeholder `{name}` is declared by no variant, nor is it a standard placeholder or a section's slot: templates cannot read it, so it changes nothing"
            ),
            Problem::ExtraKeyIsAField { key } => write!(
                f,
                "`{key}` is written under `extra`, so it sets `extra.{key}`, not the context's `{key}`, which keeps its own value"
            ),
            Problem::MoreProblems {
                shown,
                errors,
                warnings,
                files,
            } => {
                let count =
                    |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
                let left = match (errors, warnings) {
                    (0, w) => count(*w, "more warning"),
                    (e, 0) => count(*e, "more error"),
                    (e, w) => format!(
                        "{} and {}",
                        count(*e, "more error"),
                        count(*w, "more warning")
                    ),
                };
                match files {
                    None => write!(
                        f,
                        "this file has {left}, not shown: only a file's first {shown} problems are reported"
                    ),
                    Some(files) => write!(
                        f,
                        "{left} in {}, not shown: only a run's first {shown} problems are reported",
                        count(*files, "file")
                    ),
                }
            }
            Problem::TooMuchCode { limit } => write!(
                f,
                "with this one, the workspace's templates and conditions hold more than {limit} bytes of code (inside `{{{{ … }}}}` and `{{% … %}}`, and conditions), which a workspace may not"
            ),
            Problem::TooMuchText { limit, setting } if *setting == "limits.compile_bytes" => {
                write!(
                    f,
                    "with this template, the compile builds more than {limit} bytes of text (`{setting}`)"
                )
            }
            Problem::TooMuchText { limit, setting } => {
                write!(
                    f,
                    "this template builds more than {limit} bytes of text (`{setting}`)"
                )
            }
            Problem::PostprocessOutOfFuel {
                fuel,
                per_kib,
                groups: true,
            } => write!(
                f,
                "this post-processing rule's replacement writes groups of its matches (`$1`, `${{name}}`), and finding them steps through the pattern for each byte of a match, at {per_kib} fuel a KiB: more than is left of the compile's fuel ({fuel}) over this prompt's matches"
            ),
            Problem::PostprocessOutOfFuel { fuel, per_kib, .. } => write!(
                f,
                "this post-processing rule's regex cannot be searched quickly over this prompt, and searching it state by state costs {per_kib} fuel a KiB: more than is left of the compile's fuel ({fuel})"
            ),
            Problem::SchemasTooLarge { limit, bytes } => write!(
                f,
                "with this parameter's schema (about {bytes} bytes for each tool that has it), the compile's text and its tools' schemas come to more than {limit} bytes (`limits.compile_bytes`)"
            ),
            Problem::PostprocessGrows { limit } => write!(
                f,
                "this post-processing rule makes the prompt longer than {limit} bytes (`limits.compile_bytes`)"
            ),
            Problem::OverBudget {
                family,
                budget,
                cap,
                encoding,
                exact,
                contexts,
                largest,
            } => {
                // Counts with another family's tokenizer are estimates, marked as in `stats`.
                let about = if *exact { "" } else { "≈" };
                let told = |tokens: usize| {
                    if tokens > *cap {
                        format!("over {about}{cap}")
                    } else {
                        format!("{about}{tokens}")
                    }
                };
                let over: Vec<String> = contexts
                    .iter()
                    .map(|count| match count.parts {
                        Some((prompt, definitions)) => format!(
                            "{} {} (prompt {}, tool definitions {})",
                            count.context,
                            told(count.tokens),
                            told(prompt),
                            told(definitions)
                        ),
                        None => format!("{} {}", count.context, told(count.tokens)),
                    })
                    .collect();
                let largest: Vec<String> = largest
                    .iter()
                    .map(|(section, tokens)| format!("{section} {}", told(*tokens)))
                    .collect();
                let contexts_word = if contexts.len() == 1 {
                    "context"
                } else {
                    "contexts"
                };
                write!(
                    f,
                    "{family} is over its budget of {budget} tokens ({encoding}) in {} {contexts_word}: {}",
                    contexts.len(),
                    over.join(", ")
                )?;
                if let (Some(worst), false) = (contexts.first(), largest.is_empty()) {
                    write!(
                        f,
                        "; largest sections in {}: {}",
                        worst.context,
                        largest.join(", ")
                    )?;
                }
                Ok(())
            }
            Problem::VolatileEarly {
                outputs,
                volatile,
                in_definitions: true,
                ..
            } => write!(
                f,
                "{}: a value that changes per request ({}) changes the native tool definitions, which are sent before the prompt; nothing of the request can be served from a prompt cache",
                named_outputs(outputs),
                volatile.join(", ")
            ),
            Problem::VolatileEarly {
                outputs,
                percent,
                section,
                volatile,
                ..
            } => {
                let names = named_outputs(outputs);
                let how_far = if outputs.len() > 1 {
                    "as early as "
                } else {
                    ""
                };
                write!(
                    f,
                    "{names}: a value that changes per request ({}) appears {how_far}{percent}% into the prompt",
                    volatile.join(", ")
                )?;
                if let Some(section) = section {
                    write!(f, ", in section `{section}`")?;
                }
                write!(
                    f,
                    "; only the text before it can be served from a prompt cache"
                )
            }
            Problem::ProcessorTimeSpent { spent_ms, stopped } => {
                let (doing, left) = match stopped {
                    StoppedWork::Compiles => ("compiling", "the compiles left were not made"),
                    StoppedWork::Postprocess => (
                        "applying the post-processing rules",
                        "this rule and those after it were not applied, and the compile failed",
                    ),
                    StoppedWork::RoutingExpectations => (
                        "testing the routing rules on `[[routing.expect]]` models",
                        "the models from this one on were not tested",
                    ),
                };
                write!(
                    f,
                    "promptc stopped {doing} after {:.1} s of processor time, most of what its limit allows: {left}",
                    *spent_ms as f64 / 1000.0
                )
            }
            Problem::StablePrefixUnchecked {
                outputs, reason, ..
            } => {
                let names = named_outputs(outputs);
                write!(
                    f,
                    "{names}: the stable prefix is not checked: with the values `tokens.volatile` lists changed, the prompt does not compile ({reason})"
                )
            }
            Problem::Routing(routing) => write!(f, "{routing}"),
            Problem::Definitions(problem) => write!(f, "{problem}"),
            Problem::Rules(rules) => write!(f, "{rules}"),
            Problem::ForEachNotAList { found } => {
                let article = if found.starts_with(['a', 'e', 'i', 'o', 'u']) {
                    "an"
                } else {
                    "a"
                };
                write!(
                    f,
                    "`for_each` must give a list, but gives {article} {found}"
                )
            }
            Problem::PostprocessPassOutOfFuel { fuel, free } => write!(
                f,
                "each post-processing rule past the first {free} costs 1 fuel per 16 bytes of the prompt it reads, and this rule's pass cost more than was left of the compile's fuel ({fuel})"
            ),
            Problem::TooManyOutputs {
                outputs,
                families,
                contexts,
                entries,
                limit,
            } => {
                let plural = |n: usize, one: &'static str, many: &'static str| {
                    if n == 1 { one } else { many }
                };
                write!(
                    f,
                    "the build matrix writes {outputs} outputs ({families} {} × {contexts} {}",
                    plural(*families, "family", "families"),
                    plural(*contexts, "context", "contexts"),
                )?;
                if *entries > 0 {
                    write!(
                        f,
                        ", and {entries} {}",
                        plural(*entries, "entry", "entries")
                    )?;
                }
                write!(f, "), more than `limits.outputs` ({limit})")
            }
            Problem::TooManyTokens { limit } => write!(
                f,
                "the file is more than {limit} pieces to read (keys, values, brackets, line ends, comments and the spaces between them), more than promptc keeps in memory: it was not read"
            ),
            Problem::TooManyValues {
                limit,
                together: false,
            } => write!(
                f,
                "the file holds more than {limit} values (keys, items and tables), more than promptc keeps in memory: it was not read"
            ),
            Problem::TooManyValues {
                limit,
                together: true,
            } => write!(
                f,
                "with this file, the workspace's data files hold more than {limit} values (keys, items and tables) together, more than promptc keeps in memory: it was not read"
            ),
            Problem::FamilyNeverBuilt { family } => write!(
                f,
                "family `{family}` is in no output of the build matrix: `validate`, `check` and `build --all` never compile it, so a problem its prompts have goes unseen"
            ),
            Problem::KeysTooLong { limit } => write!(
                f,
                "the file's keys, each with the keys it is nested in, are longer together than the {} MiB promptc keeps to place its values: it was not read",
                limit >> 20
            ),
            Problem::InheritsTooMuch { kind, limit } => write!(
                f,
                "the {kind}s, each with what it inherits through `extends`, hold more than {limit} bytes together (`limits.workspace_bytes`)"
            ),
            Problem::ForEachTooLong { limit } => write!(
                f,
                "`for_each` gives more than {limit} items, more tools than one spec may make"
            ),
            Problem::ToolNameTaken {
                name,
                first,
                mcp: false,
            } => {
                write!(f, "tool name `{name}` is already offered by tool `{first}`")
            }
            Problem::ToolNameTaken { name, first, .. } => write!(
                f,
                "tool name `{name}` is already taken in the tool definitions (by `{first}`)"
            ),
            Problem::BadToolName { name } => {
                write!(f, "tool name `{name}` cannot be called by a model")
            }
        }
    }
}

/// Names in backquotes, joined with commas and a last `and`: "`a`", "`a` and `b`".
fn quoted_list(names: &[String]) -> String {
    let quoted: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The outputs a finding names: a few of them, a long list cut with the count kept.
fn named_outputs(outputs: &[String]) -> String {
    const NAMED: usize = 3;
    let mut names = outputs
        .iter()
        .take(NAMED)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if outputs.len() > NAMED {
        names.push_str(&format!(" and {} more outputs", outputs.len() - NAMED));
    }
    names
}

/// `variant `a``, `variants `a`, `b` and `c``, or the first seven and how many more.
fn variant_list(variants: &[String]) -> String {
    let named = |variant: &String| format!("`{variant}`");
    match variants {
        [] => "no variant".to_string(),
        [one] => format!("variant {}", named(one)),
        [first @ .., last] if variants.len() <= 8 => format!(
            "variants {} and {}",
            first.iter().map(named).collect::<Vec<_>>().join(", "),
            named(last)
        ),
        _ => format!(
            "variants {} and {} more",
            variants[..7]
                .iter()
                .map(named)
                .collect::<Vec<_>>()
                .join(", "),
            variants.len() - 7
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One problem of each variant. The match in `variant_index` has no catch-all, so a new
    /// variant does not compile until it gets the next index there; the test then asks for
    /// one of it here.
    fn one_of_each() -> Vec<Problem> {
        let text = String::new;
        vec![
            Problem::EmptyFile { inline: false },
            Problem::NotUtf8,
            Problem::TomlSyntax {
                message: text(),
                hint: None,
            },
            Problem::YamlSyntax { message: text() },
            Problem::UnsupportedNumber { text: text() },
            Problem::JsonSyntax { message: text() },
            Problem::UnknownKey {
                key: text(),
                expected: Vec::new().into(),
                suggestion: None,
                belongs_in: None,
                set_there: false,
            },
            Problem::NameTaken {
                name: text(),
                what: DeclaredName::Predicate,
                taken_by: TakenBy::Predicate,
            },
            Problem::MissingField { field: text() },
            Problem::WrongType {
                expected: text(),
                found: text(),
                instead: None,
            },
            Problem::InvalidValue(InvalidValue::Empty),
            Problem::InvalidValue(InvalidValue::EmptyServerName),
            Problem::OutputOverlapsSources {
                out: text(),
                setting: text(),
                folder: text(),
            },
            Problem::BadContextName { name: text() },
            Problem::DuplicateId {
                kind: RefKind::Tool,
                name: text(),
            },
            Problem::UnknownReference {
                kind: RefKind::Tool,
                name: text(),
                suggestion: None,
            },
            Problem::Cycle {
                link: CycleLink::Extends,
                chain: Vec::new(),
            },
            Problem::UnusedOverride {
                kind: RefKind::Tool,
                name: text(),
                variant: text(),
            },
            Problem::AlreadyListed {
                kind: RefKind::Tool,
                name: text(),
                field: "add_tools",
                holder: text(),
                own: false,
            },
            Problem::ListingEntryUnused {
                name: text(),
                in_context: false,
                suggestion: None,
            },
            Problem::ServerNotListed {
                name: text(),
                listing: text(),
            },
            Problem::SchemaKeyOfAField {
                key: text(),
                field: "",
            },
            Problem::ToolsNeverWritten {
                variant: text(),
                count: 1,
            },
            Problem::ToolsDocumentedTwice {
                variant: text(),
                count: 1,
            },
            Problem::FamilyEntryUnused {
                kind: RefKind::Tool,
                id: text(),
                family: text(),
            },
            Problem::ParameterNeverShown {
                tool: text(),
                parameter: text(),
                missing: vec![text()],
                together: false,
            },
            Problem::OrderPastTheEnd {
                kind: RefKind::Tool,
                name: text(),
                order: 2,
                len: 1,
            },
            Problem::UndefinedPlaceholder {
                name: text(),
                suggestion: None,
                declared_unread: None,
            },
            Problem::GuardedNameDefinedNowhere {
                name: text(),
                suggestion: text(),
            },
            Problem::UnslottedComponent {
                component: text(),
                slot: text(),
                variant: text(),
                read_only_by: vec![text()],
            },
            Problem::UnknownTemplate {
                tag: "include",
                name: text(),
                others: Vec::new(),
                suggestion: None,
                on_disk: false,
            },
            Problem::UnknownTemplate {
                tag: "include",
                name: text(),
                others: Vec::new(),
                suggestion: None,
                on_disk: true,
            },
            Problem::TemplateCycle { chain: Vec::new() },
            Problem::ComputedTemplateName { tag: "include" },
            Problem::UnusedPartial { name: text() },
            Problem::UnusedComponent { id: text() },
            Problem::UnusedTool { id: text() },
            Problem::NotReadAsData {
                path: text(),
                why: NotRead::Json,
            },
            Problem::SectionReadBeforeItRenders {
                slot: text(),
                component: text(),
                reader: text(),
                variants: vec![text()],
                mutual_in: Vec::new(),
            },
            Problem::SectionWrittenTwice {
                slot: text(),
                first: text(),
                variants: vec![text()],
            },
            Problem::SectionNeverRendered {
                slot: text(),
                component: text(),
            },
            Problem::SectionReadByTools {
                slot: text(),
                tool: None,
            },
            Problem::ToolNeverEnabled {
                name: text(),
                suggestion: None,
            },
            Problem::ConditionOnATable {
                path: text(),
                field: None,
                negated: false,
            },
            Problem::ConditionIsText {
                written: text(),
                holds: true,
            },
            Problem::TemplateConflict,
            Problem::MissingTemplate {
                expected_file: None,
                near: None,
            },
            Problem::TemplateFileMissing {
                path: text(),
                suggestion: None,
                named: true,
            },
            Problem::NoFamilyTemplate {
                component: text(),
                family: text(),
            },
            Problem::PathEscapesWorkspace {
                path: text(),
                default_of: None,
                through_link: false,
            },
            Problem::PathEscapesWorkspace {
                path: text(),
                default_of: Some(text()),
                through_link: true,
            },
            Problem::PathInGitFolder {
                setting: text(),
                path: text(),
            },
            Problem::PathRefused {
                path: text(),
                reason: text(),
                help: text(),
            },
            Problem::TemplateSyntax {
                message: text(),
                meant: None,
                known: None,
                left_open: None,
            },
            Problem::ConditionSyntax {
                message: text(),
                meant: None,
                known: None,
            },
            Problem::UnknownContextField {
                path: text(),
                suggestion: None,
                reader: PathReader::Condition,
                fields: Vec::new(),
            },
            Problem::NotYetDefined {
                name: text(),
                reason: NotVisible::LaterPredicate,
            },
            Problem::InvalidRegex { message: text() },
            Problem::UnknownGroup {
                group: text(),
                groups: 1,
                names: Vec::new(),
                suggestion: None,
            },
            Problem::LiteralDollar {
                after: text(),
                group: None,
            },
            Problem::OutputsReadAsRules {
                output: text(),
                context: text(),
                folder: text(),
            },
            Problem::RulesReadFromOutputs {
                output: text(),
                context: text(),
                folder: text(),
            },
            Problem::NeverEqual {
                comparison: text(),
                path: text(),
                holds: text(),
                unequal: false,
                suggestion: None,
            },
            Problem::RenderFailed {
                message: text(),
                meant: None,
                known: None,
            },
            Problem::ConditionFailed {
                message: text(),
                meant: None,
                known: None,
                undefined: None,
            },
            Problem::NoDate {
                epoch_invalid: true,
            },
            Problem::NoVariant { family: text() },
            Problem::DuplicateSlot {
                slot: text(),
                component: text(),
                other: text(),
            },
            Problem::OverBudget {
                family: text(),
                budget: 0,
                cap: 0,
                encoding: "",
                exact: false,
                contexts: Vec::new(),
                largest: Vec::new(),
            },
            Problem::VolatileEarly {
                outputs: Vec::new(),
                percent: 0,
                section: None,
                volatile: Vec::new(),
                in_definitions: false,
                at_condition: false,
                error: false,
            },
            Problem::StablePrefixUnchecked {
                outputs: Vec::new(),
                reason: String::new(),
                error: false,
            },
            Problem::ProcessorTimeSpent {
                spent_ms: 0,
                stopped: StoppedWork::Compiles,
            },
            Problem::OutOfFuel { fuel: 0 },
            Problem::ConditionsOutOfFuel { fuel: 0 },
            Problem::TooMuchCode { limit: 0 },
            Problem::MoreProblems {
                shown: 0,
                errors: 0,
                warnings: 0,
                files: None,
            },
            Problem::ExtraKeyIsAField { key: text() },
            Problem::PlaceholderUnread {
                name: text(),
                suggestion: None,
            },
            Problem::SetValueDoesNotFit {
                name: text(),
                text: text(),
                expected: crate::model::PlaceholderKind::Boolean,
                from: crate::model::KindFrom::Standard,
                reason: None,
            },
            Problem::PlaceholderIsAKey { key: text() },
            Problem::UnknownFunction {
                name: text(),
                suggestion: None,
                known: Vec::new(),
            },
            Problem::UnknownFilter {
                name: text(),
                suggestion: None,
                known: Vec::new(),
            },
            Problem::TooManyTokens { limit: 1 },
            Problem::TooManyOutputs {
                outputs: 2,
                families: 1,
                contexts: 2,
                entries: 0,
                limit: 1,
            },
            Problem::UnknownTest {
                name: text(),
                suggestion: None,
                known: Vec::new(),
            },
            Problem::MacroArgumentMissing {
                name: text(),
                argument: text(),
            },
            Problem::TooMuchText {
                limit: 0,
                setting: "",
            },
            Problem::PostprocessGrows { limit: 0 },
            Problem::SchemasTooLarge { limit: 0, bytes: 0 },
            Problem::PostprocessOutOfFuel {
                fuel: 0,
                per_kib: 0,
                groups: false,
            },
            Problem::ChainTooLong {
                link: CycleLink::Extends,
            },
            Problem::Routing(RoutingProblem::RoutedTwice { family: text() }),
            Problem::ForEachNotAList { found: text() },
            Problem::ForEachTooLong { limit: 0 },
            Problem::InheritsTooMuch {
                kind: RefKind::Context,
                limit: 0,
            },
            Problem::TooManyValues {
                limit: 0,
                together: false,
            },
            Problem::KeysTooLong { limit: 0 },
            Problem::AbsolutePath {
                path: text(),
                relative: text(),
            },
            Problem::FamilyNeverBuilt { family: text() },
            Problem::ServerTablesConflict,
            Problem::FoldersOverlap {
                setting: text(),
                folder: text(),
                other: text(),
                other_folder: text(),
            },
            Problem::PostprocessPassOutOfFuel { fuel: 0, free: 0 },
            Problem::ToolNameTaken {
                name: text(),
                first: text(),
                mcp: false,
            },
            Problem::BadToolName { name: text() },
            Problem::Definitions(DefinitionProblem::McpNameFailed { message: text() }),
            Problem::Rules(RulesProblem::FrontmatterUnclosed),
        ]
    }

    /// The number of arms of `variant_index`.
    const VARIANTS: usize = 103;

    fn variant_index(problem: &Problem) -> usize {
        match problem {
            Problem::EmptyFile { .. } => 0,
            Problem::NotUtf8 => 1,
            Problem::TomlSyntax { .. } => 2,
            Problem::YamlSyntax { .. } => 3,
            Problem::UnsupportedNumber { .. } => 4,
            Problem::JsonSyntax { .. } => 5,
            Problem::UnknownKey { .. } => 6,
            Problem::NameTaken { .. } => 7,
            Problem::MissingField { .. } => 8,
            Problem::WrongType { .. } => 9,
            Problem::InvalidValue(_) => 10,
            Problem::OutputOverlapsSources { .. } => 11,
            Problem::BadContextName { .. } => 12,
            Problem::DuplicateId { .. } => 13,
            Problem::UnknownReference { .. } => 14,
            Problem::Cycle { .. } => 15,
            Problem::UnusedOverride { .. } => 16,
            Problem::UndefinedPlaceholder { .. } => 17,
            Problem::UnslottedComponent { .. } => 18,
            Problem::TemplateConflict => 19,
            Problem::MissingTemplate { .. } => 20,
            Problem::TemplateFileMissing { .. } => 21,
            Problem::PathEscapesWorkspace { .. } => 22,
            Problem::PathRefused { .. } => 23,
            Problem::TemplateSyntax { .. } => 24,
            Problem::ConditionSyntax { .. } => 25,
            Problem::UnknownContextField { .. } => 26,
            Problem::NotYetDefined { .. } => 27,
            Problem::InvalidRegex { .. } => 28,
            Problem::RenderFailed { .. } => 29,
            Problem::ConditionFailed { .. } => 30,
            Problem::NoDate { .. } => 31,
            Problem::NoVariant { .. } => 32,
            Problem::DuplicateSlot { .. } => 33,
            Problem::OverBudget { .. } => 34,
            Problem::VolatileEarly { .. } => 35,
            Problem::OutOfFuel { .. } => 36,
            Problem::TooMuchText { .. } => 37,
            Problem::Routing(_) => 38,
            Problem::NoFamilyTemplate { .. } => 39,
            Problem::ForEachNotAList { .. } => 40,
            Problem::ToolNameTaken { .. } => 41,
            Problem::BadToolName { .. } => 42,
            Problem::UnknownTemplate { .. } => 43,
            Problem::TemplateCycle { .. } => 44,
            Problem::ComputedTemplateName { .. } => 45,
            Problem::UnusedPartial { .. } => 46,
            Problem::Definitions(_) => 47,
            Problem::Rules(_) => 48,
            Problem::PostprocessGrows { .. } => 49,
            Problem::ChainTooLong { .. } => 50,
            Problem::PathInGitFolder { .. } => 51,
            Problem::PostprocessOutOfFuel { .. } => 52,
            Problem::ForEachTooLong { .. } => 53,
            Problem::InheritsTooMuch { .. } => 54,
            Problem::SchemasTooLarge { .. } => 55,
            Problem::ConditionsOutOfFuel { .. } => 56,
            Problem::SectionReadBeforeItRenders { .. } => 57,
            Problem::SectionNeverRendered { .. } => 58,
            Problem::ConditionOnATable { .. } => 59,
            Problem::StablePrefixUnchecked { .. } => 60,
            Problem::ProcessorTimeSpent { .. } => 61,
            Problem::AlreadyListed { .. } => 62,
            Problem::ListingEntryUnused { .. } => 63,
            Problem::UnknownGroup { .. } => 64,
            Problem::ToolsNeverWritten { .. } => 65,
            Problem::OrderPastTheEnd { .. } => 66,
            Problem::LiteralDollar { .. } => 67,
            Problem::NeverEqual { .. } => 68,
            Problem::OutputsReadAsRules { .. } => 69,
            Problem::TooMuchCode { .. } => 70,
            Problem::MoreProblems { .. } => 71,
            Problem::UnusedComponent { .. } => 72,
            Problem::UnusedTool { .. } => 73,
            Problem::ExtraKeyIsAField { .. } => 74,
            Problem::NotReadAsData { .. } => 75,
            Problem::ConditionIsText { .. } => 76,
            Problem::PlaceholderIsAKey { .. } => 77,
            Problem::UnknownFunction { .. } => 78,
            Problem::MacroArgumentMissing { .. } => 79,
            Problem::PlaceholderUnread { .. } => 80,
            Problem::ServerNotListed { .. } => 81,
            Problem::SchemaKeyOfAField { .. } => 82,
            Problem::SectionReadByTools { .. } => 83,
            Problem::ToolNeverEnabled { .. } => 84,
            Problem::TooManyValues { .. } => 85,
            Problem::PostprocessPassOutOfFuel { .. } => 86,
            Problem::GuardedNameDefinedNowhere { .. } => 87,
            Problem::ToolsDocumentedTwice { .. } => 88,
            Problem::FamilyEntryUnused { .. } => 89,
            Problem::ParameterNeverShown { .. } => 90,
            Problem::SetValueDoesNotFit { .. } => 91,
            Problem::UnknownFilter { .. } => 92,
            Problem::UnknownTest { .. } => 93,
            Problem::TooManyTokens { .. } => 94,
            Problem::TooManyOutputs { .. } => 95,
            Problem::RulesReadFromOutputs { .. } => 96,
            Problem::KeysTooLong { .. } => 97,
            Problem::FamilyNeverBuilt { .. } => 98,
            Problem::AbsolutePath { .. } => 99,
            Problem::ServerTablesConflict => 100,
            Problem::SectionWrittenTwice { .. } => 101,
            Problem::FoldersOverlap { .. } => 102,
        }
    }

    /// `UnknownKey` → `unknown-key`.
    fn kebab(name: &str) -> String {
        let mut kebab = String::new();
        for (index, c) in name.chars().enumerate() {
            if c.is_ascii_uppercase() && index > 0 {
                kebab.push('-');
            }
            kebab.push(c.to_ascii_lowercase());
        }
        kebab
    }

    // Each unknown key of a table that expects thousands listed all of them in its help.
    /// Jinja's `varargs` and `kwargs`, read in a macro ported from elsewhere, are told as
    /// what minijinja's macros lack, not as a placeholder to define.
    #[test]
    fn varargs_and_kwargs_are_told_as_what_macros_lack() {
        for name in ["varargs", "kwargs"] {
            let help = Problem::UndefinedPlaceholder {
                name: name.into(),
                suggestion: None,
                declared_unread: None,
            }
            .help()
            .unwrap_or_default();
            assert!(help.starts_with("minijinja's macros have no"), "{help}");
        }
        let other = Problem::UndefinedPlaceholder {
            name: "args".into(),
            suggestion: None,
            declared_unread: None,
        };
        assert!(other.help().unwrap_or_default().starts_with("define it"));
    }

    #[test]
    fn a_template_name_composed_otherwise_is_told_as_such() {
        // `café` with `é` as one character (NFC), and as `e` and a combining accent (NFD).
        let (nfc, nfd) = ("partials/caf\u{e9}.md", "partials/cafe\u{301}.md");
        let help = |name: &str, suggestion: &str| {
            Problem::UnknownTemplate {
                tag: "include",
                name: name.into(),
                others: Vec::new(),
                suggestion: Some(suggestion.into()),
                on_disk: false,
            }
            .help()
            .unwrap_or_default()
        };
        assert!(
            help(nfc, nfd).contains("composed otherwise"),
            "{}",
            help(nfc, nfd)
        );
        assert!(help(nfd, nfc).contains("composed otherwise"));
        assert_eq!(
            help("partials/cafe.md", nfc),
            format!("did you mean `{nfc}`?")
        );
        // A `template_file` is suggested the file's name beside it, which looked the same.
        let missing = |path: &str, near: &str| {
            Problem::TemplateFileMissing {
                path: path.into(),
                suggestion: Some(near.into()),
                named: true,
            }
            .help()
            .unwrap_or_default()
        };
        let near = nfd.trim_start_matches("partials/");
        assert!(missing(nfc, near).contains("composed otherwise"));
        assert_eq!(
            missing("partials/cafe.md", near),
            format!("did you mean `{near}`?")
        );
    }

    #[test]
    fn an_unknown_key_names_the_first_expected_keys_and_counts_the_rest() {
        let expected: std::sync::Arc<[String]> = (0..40).map(|n| format!("field_{n}")).collect();
        let problem = Problem::UnknownKey {
            key: "other".into(),
            expected,
            suggestion: None,
            belongs_in: None,
            set_there: false,
        };
        let help = problem.help().unwrap_or_default();
        assert!(
            help.starts_with("expected one of: field_0, field_1, "),
            "{help}"
        );
        assert!(help.ends_with("field_31 and 8 more"), "{help}");
    }

    // A value of a megabyte was quoted whole in its message, once per diagnostic.
    #[test]
    fn a_long_quoted_text_is_cut_in_its_middle() {
        let key = format!("a{}z", "k".repeat(300_000));
        let message = Problem::UnknownKey {
            key: key.clone(),
            expected: vec!["id".into()].into(),
            suggestion: None,
            belongs_in: None,
            set_there: false,
        }
        .to_string();
        assert_eq!(
            message,
            format!("unknown key `a{}…{}z`", "k".repeat(39), "k".repeat(19))
        );
        let short = Problem::UnknownKey {
            key: "idd".into(),
            expected: vec!["id".into()].into(),
            suggestion: None,
            belongs_in: None,
            set_there: false,
        };
        assert_eq!(short.to_string(), "unknown key `idd`");
        // Unpaired backticks, and long text outside quotes, stay bounded.
        let odd = format!("`{}` and ` {}", "q".repeat(100), "w".repeat(5_000));
        let odd = shortened_quotes(&odd);
        assert!(odd.chars().count() <= MESSAGE_CHARS + 1, "{}", odd.len());
        assert!(odd.starts_with(&format!("`{}…", "q".repeat(40))), "{odd}");
        // Many short quotes are cut as a whole too.
        let many = vec!["`kw`"; 5_000].join(", ");
        assert_eq!(shortened_quotes(&many).chars().count(), MESSAGE_CHARS + 1);
    }

    #[test]
    fn every_variant_is_named_after_its_code() {
        let problems = one_of_each();
        let mut indices: Vec<usize> = problems.iter().map(variant_index).collect();
        indices.sort_unstable();
        indices.dedup();
        assert_eq!(indices, (0..VARIANTS).collect::<Vec<_>>());
        for problem in &problems {
            // A family of problems with codes of its own is named by its inner variant.
            let debug = match problem {
                Problem::Routing(inner) => format!("{inner:?}"),
                Problem::Definitions(inner) => format!("{inner:?}"),
                Problem::Rules(inner) => format!("{inner:?}"),
                _ => format!("{problem:?}"),
            };
            let name = debug
                .split(|c: char| !c.is_ascii_alphanumeric())
                .next()
                .unwrap_or_default();
            // `NotUtf8` is `not-utf8`: digits stay with the word before them.
            assert_eq!(kebab(name), problem.code(), "{debug}");
        }
    }
}
