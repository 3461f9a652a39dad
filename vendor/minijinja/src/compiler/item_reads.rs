//! promptc patch: the fields a template reads from the values its names stand for, loop
//! variables included, so that a check can hold them against the shape of the data they come
//! from (`{% for r in server.resources %}{{ r.urii }}` reads `urii` of an item of
//! `server.resources`, and `server` is itself an item of `mcp_servers`).
//!
//! `find_undeclared` with `track_nested` gives the dotted paths of names nothing sets; a loop
//! variable is set by its loop, so its fields were not given at all.

use std::collections::HashMap;
use std::ops::Range;

use crate::compiler::ast;

/// One read of a field of a name: `r.uri`, with what `r` stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemRead {
    /// The read as written, from the name to its last field: `r.uri`.
    pub written: String,
    /// What the name at its head stands for, as a path from a name the template does not
    /// set, where an item of a list is written as the list (`mcp_servers.resources` for an
    /// item of any server's resources); `None` for a name the template does not set.
    pub bound_to: Option<String>,
    /// Where the read lies in the template's source, in bytes.
    pub range: Range<usize>,
    /// Where the read up to each field ends (`r.uri` of `r.uri.x`), in the order written.
    pub field_ends: Vec<usize>,
}

/// What a name of the template stands for where it is read.
#[derive(Clone)]
enum Binding {
    /// A value whose path is known: a loop's item, or a value set from a path.
    Path(String),
    /// A value set from something else (a call, a literal, a macro's argument).
    Unknown,
}

/// The names one frame (or branch) of the render sets, each with when it was set.
#[derive(Default)]
struct Scope<'a> {
    names: HashMap<&'a str, (Binding, u64)>,
    /// When the last statement that may set any name ran in it (an include, which renders in
    /// this frame; the start of a macro's body, which sees names set after its definition):
    /// a name set before it, here or further out, stands for something unknown after it.
    barrier: u64,
}

struct Walker<'a> {
    scopes: Vec<Scope<'a>>,
    /// Counts the bindings and barriers, in the order of the source.
    seq: u64,
    out: Vec<ItemRead>,
}

/// What a name stands for where it is read.
enum Found {
    /// Set by the template, to this.
    Bound(Binding),
    /// Not set by the template, nor possibly by what it includes.
    Free,
}

/// Filters whose result holds the items of their input (or is one of them).
const KEEPS_ITEMS: [&str; 8] = [
    "selectattr",
    "rejectattr",
    "sort",
    "reverse",
    "list",
    "unique",
    "first",
    "last",
];

/// Every read of a field of a name, in the order of the source.
pub fn find_item_reads(t: &ast::Stmt<'_>) -> Vec<ItemRead> {
    let mut walker = Walker {
        scopes: vec![Scope::default()],
        seq: 0,
        out: Vec::new(),
    };
    walker.stmt(t);
    walker.out
}

impl<'a> Walker<'a> {
    /// What `name` stands for: a binding set after every barrier between it and here is
    /// what it was set to; one set before is unknown, and so is a name no scope sets once a
    /// barrier stands (an included template may have set it).
    fn lookup(&self, name: &str) -> Found {
        let mut barrier = 0;
        for scope in self.scopes.iter().rev() {
            barrier = barrier.max(scope.barrier);
            if let Some((binding, at)) = scope.names.get(name) {
                return Found::Bound(if *at < barrier {
                    Binding::Unknown
                } else {
                    binding.clone()
                });
            }
        }
        if barrier > 0 {
            Found::Bound(Binding::Unknown)
        } else {
            Found::Free
        }
    }

    /// Sets `name` in the innermost scope.
    fn set(&mut self, name: &'a str, binding: Binding) {
        self.seq += 1;
        let at = self.seq;
        if let Some(scope) = self.scopes.last_mut() {
            scope.names.insert(name, (binding, at));
        }
    }

    /// A statement that may set any name (see [`Scope::barrier`]).
    fn barrier(&mut self) {
        self.seq += 1;
        let at = self.seq;
        if let Some(scope) = self.scopes.last_mut() {
            scope.barrier = at;
        }
    }

    fn bind(&mut self, target: &ast::Expr<'a>, value: Option<&ast::Expr<'a>>) {
        let binding = value
            .and_then(|value| self.path_of(value))
            .map_or(Binding::Unknown, Binding::Path);
        match target {
            ast::Expr::Var(var) => self.set(var.id, binding),
            ast::Expr::List(list) => list.items.iter().for_each(|x| self.bind(x, None)),
            ast::Expr::Tuple(tuple) => tuple.items.iter().for_each(|x| self.bind(x, None)),
            _ => {}
        }
    }

    /// The path of what `expr` gives, an item of a list written as the list.
    fn path_of(&self, expr: &ast::Expr<'_>) -> Option<String> {
        match expr {
            ast::Expr::Var(var) => match self.lookup(var.id) {
                Found::Free => Some(var.id.to_string()),
                Found::Bound(Binding::Path(path)) => Some(path),
                Found::Bound(Binding::Unknown) => None,
            },
            ast::Expr::GetAttr(attr) => {
                Some(format!("{}.{}", self.path_of(&attr.expr)?, attr.name))
            }
            ast::Expr::GetItem(item) => match &item.subscript_expr {
                // A key with a dot (`rule_toggles["AGENTS.md"]`) is no path's segment.
                ast::Expr::Const(key) => match key.value.as_str() {
                    Some(key) if key.contains('.') => None,
                    Some(key) => Some(format!("{}.{key}", self.path_of(&item.expr)?)),
                    None if key.value.as_i64().is_some() => self.path_of(&item.expr),
                    None => None,
                },
                _ => None,
            },
            ast::Expr::Slice(slice) => self.path_of(&slice.expr),
            ast::Expr::Filter(filter) if KEEPS_ITEMS.contains(&filter.name) => {
                self.path_of(filter.expr.as_ref()?)
            }
            _ => None,
        }
    }

    /// The read `expr` is (a chain of fields from a name), when it is one.
    fn read(&self, expr: &ast::Expr<'_>) -> Option<ItemRead> {
        let mut fields = Vec::new();
        let mut field_ends = Vec::new();
        let mut at = expr;
        // A chain's span starts where its last link does: the read starts at its name.
        let (root, start) = loop {
            match at {
                ast::Expr::GetAttr(attr) => {
                    fields.push(attr.name);
                    field_ends.push(at.span().end_offset as usize);
                    at = &attr.expr;
                }
                ast::Expr::GetItem(item) => match &item.subscript_expr {
                    ast::Expr::Const(key)
                        if key.value.as_str().is_some_and(|key| !key.contains('.')) =>
                    {
                        fields.push(key.value.as_str()?);
                        field_ends.push(at.span().end_offset as usize);
                        at = &item.expr;
                    }
                    _ => return None,
                },
                ast::Expr::Var(var) => break (var.id, at.span().start_offset as usize),
                _ => return None,
            }
        };
        if fields.is_empty() {
            return None;
        }
        let bound_to = match self.lookup(root) {
            Found::Free => None,
            Found::Bound(Binding::Path(path)) => Some(path),
            Found::Bound(Binding::Unknown) => return None,
        };
        let mut written = root.to_string();
        for field in fields.iter().rev() {
            written.push('.');
            written.push_str(field);
        }
        let span = expr.span();
        field_ends.reverse();
        Some(ItemRead {
            written,
            bound_to,
            range: start..span.end_offset as usize,
            field_ends,
        })
    }

    fn expr(&mut self, expr: &ast::Expr<'a>) {
        if let Some(read) = self.read(expr) {
            self.out.push(read);
            // The subscripts of the chain are reads of their own.
            let mut at = expr;
            loop {
                match at {
                    ast::Expr::GetAttr(attr) => at = &attr.expr,
                    ast::Expr::GetItem(item) => {
                        self.expr(&item.subscript_expr);
                        at = &item.expr;
                    }
                    _ => return,
                }
            }
        }
        match expr {
            ast::Expr::Var(_) | ast::Expr::Const(_) => {}
            ast::Expr::UnaryOp(op) => self.expr(&op.expr),
            ast::Expr::BinOp(op) => {
                self.expr(&op.left);
                self.expr(&op.right);
            }
            ast::Expr::Compare(compare) => {
                self.expr(&compare.expr);
                compare.ops.iter().for_each(|op| self.expr(&op.expr));
            }
            ast::Expr::IfExpr(expr) => {
                self.expr(&expr.test_expr);
                self.expr(&expr.true_expr);
                self.expr_opt(&expr.false_expr);
            }
            ast::Expr::Filter(filter) => {
                self.expr_opt(&filter.expr);
                filter.args.iter().for_each(|arg| self.arg(arg));
            }
            ast::Expr::Test(test) => {
                self.expr(&test.expr);
                test.args.iter().for_each(|arg| self.arg(arg));
            }
            ast::Expr::GetAttr(attr) => self.expr(&attr.expr),
            ast::Expr::GetItem(item) => {
                self.expr(&item.expr);
                self.expr(&item.subscript_expr);
            }
            ast::Expr::Slice(slice) => {
                self.expr(&slice.expr);
                self.expr_opt(&slice.start);
                self.expr_opt(&slice.stop);
                self.expr_opt(&slice.step);
            }
            ast::Expr::Call(call) => self.call(call),
            ast::Expr::List(list) => list.items.iter().for_each(|x| self.expr(x)),
            ast::Expr::Tuple(tuple) => tuple.items.iter().for_each(|x| self.expr(x)),
            ast::Expr::Map(map) => map.keys.iter().zip(&map.values).for_each(|(k, v)| {
                self.expr(k);
                self.expr(v);
            }),
        }
    }

    fn expr_opt(&mut self, expr: &Option<ast::Expr<'a>>) {
        if let Some(expr) = expr {
            self.expr(expr);
        }
    }

    fn arg(&mut self, arg: &ast::CallArg<'a>) {
        match arg {
            ast::CallArg::Pos(x)
            | ast::CallArg::Kwarg(_, x)
            | ast::CallArg::PosSplat(x)
            | ast::CallArg::KwargSplat(x) => self.expr(x),
        }
    }

    /// A method called on a value (`x.items()`) is no field of it: what it is called on is.
    fn call(&mut self, call: &ast::Call<'a>) {
        match &call.expr {
            ast::Expr::GetAttr(method) => self.expr(&method.expr),
            callee => self.expr(callee),
        }
        call.args.iter().for_each(|arg| self.arg(arg));
    }

    /// Walks `body` in a scope of its own, then returns that scope.
    fn scoped(&mut self, body: &[ast::Stmt<'a>]) -> Scope<'a> {
        self.scopes.push(Scope::default());
        body.iter().for_each(|x| self.stmt(x));
        self.scopes.pop().unwrap_or_default()
    }

    /// Statements that may or may not run (a branch): a name they set stands for something
    /// unknown after them, and so does every name after a barrier among them (an include in
    /// an `if` renders in the frame around it).
    fn branch(&mut self, body: &[ast::Stmt<'a>]) {
        let branch = self.scoped(body);
        for name in branch.names.into_keys() {
            self.set(name, Binding::Unknown);
        }
        if branch.barrier > 0 {
            self.barrier();
        }
    }

    /// A macro's body sees the names of the frame it is defined in as they are when it is
    /// called, which may be after they are set anew: what they stand for is unknown there.
    #[cfg(feature = "macros")]
    fn macro_body(&mut self, decl: &ast::Macro<'a>) {
        decl.defaults.iter().for_each(|x| self.expr(x));
        self.scopes.push(Scope::default());
        self.barrier();
        decl.args.iter().for_each(|arg| self.bind(arg, None));
        for name in ["caller", "varargs", "kwargs"] {
            self.set(name, Binding::Unknown);
        }
        decl.body.iter().for_each(|x| self.stmt(x));
        self.scopes.pop();
    }

    fn stmt(&mut self, node: &ast::Stmt<'a>) {
        match node {
            ast::Stmt::Template(stmt) => stmt.children.iter().for_each(|x| self.stmt(x)),
            ast::Stmt::EmitExpr(expr) => self.expr(&expr.expr),
            ast::Stmt::EmitRaw(_) => {}
            ast::Stmt::ForLoop(stmt) => {
                self.expr(&stmt.iter);
                self.scopes.push(Scope::default());
                // A recursive loop's `loop(…)` walks other items with the same name.
                let iter = (!stmt.recursive).then_some(&stmt.iter);
                self.bind(&stmt.target, iter);
                self.set("loop", Binding::Unknown);
                self.expr_opt(&stmt.filter_expr);
                stmt.body.iter().for_each(|x| self.stmt(x));
                self.scopes.pop();
                self.branch(&stmt.else_body);
            }
            ast::Stmt::IfCond(stmt) => {
                self.expr(&stmt.expr);
                self.branch(&stmt.true_body);
                self.branch(&stmt.false_body);
            }
            ast::Stmt::WithBlock(stmt) => {
                self.scopes.push(Scope::default());
                for (target, expr) in &stmt.assignments {
                    self.expr(expr);
                    self.bind(target, Some(expr));
                }
                stmt.body.iter().for_each(|x| self.stmt(x));
                self.scopes.pop();
            }
            ast::Stmt::Set(stmt) => {
                self.expr(&stmt.expr);
                match &stmt.target {
                    // `{% set ns.x = … %}` sets a field of a namespace: no read.
                    ast::Expr::GetAttr(_) => {}
                    target => self.bind(target, Some(&stmt.expr)),
                }
            }
            ast::Stmt::SetBlock(stmt) => {
                stmt.body.iter().for_each(|x| self.stmt(x));
                self.expr_opt(&stmt.filter);
                self.bind(&stmt.target, None);
            }
            ast::Stmt::AutoEscape(stmt) => {
                self.expr(&stmt.enabled);
                stmt.body.iter().for_each(|x| self.stmt(x));
            }
            ast::Stmt::FilterBlock(stmt) => {
                stmt.body.iter().for_each(|x| self.stmt(x));
                self.expr(&stmt.filter);
            }
            #[cfg(feature = "multi_template")]
            ast::Stmt::Block(stmt) => {
                self.scoped(&stmt.body);
            }
            #[cfg(feature = "multi_template")]
            ast::Stmt::Extends(stmt) => self.expr(&stmt.name),
            // An included template renders in this frame, and may set any name: what the
            // names bound so far stand for is not known after it.
            #[cfg(feature = "multi_template")]
            ast::Stmt::Include(stmt) => {
                self.expr(&stmt.name);
                self.barrier();
            }
            #[cfg(feature = "multi_template")]
            ast::Stmt::Import(stmt) => {
                self.expr(&stmt.expr);
                self.bind(&stmt.name, None);
            }
            #[cfg(feature = "multi_template")]
            ast::Stmt::FromImport(stmt) => {
                self.expr(&stmt.expr);
                for (name, alias) in &stmt.names {
                    self.bind(alias.as_ref().unwrap_or(name), None);
                }
            }
            #[cfg(feature = "macros")]
            ast::Stmt::Macro(stmt) => {
                self.set(stmt.name, Binding::Unknown);
                self.macro_body(stmt);
            }
            #[cfg(feature = "macros")]
            ast::Stmt::CallBlock(stmt) => {
                self.call(&stmt.call);
                self.macro_body(&stmt.macro_decl);
            }
            #[cfg(feature = "loop_controls")]
            ast::Stmt::Continue(_) | ast::Stmt::Break(_) => {}
            ast::Stmt::Do(stmt) => self.call(&stmt.call),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compiler::parser::parse;
    use crate::syntax::SyntaxConfig;

    fn reads(source: &str) -> Vec<(String, Option<String>, String)> {
        let ast = parse(source, "t", SyntaxConfig::default()).unwrap();
        find_item_reads(&ast)
            .into_iter()
            .map(|read| {
                let text = source[read.range.clone()].to_string();
                (read.written, read.bound_to, text)
            })
            .collect()
    }

    fn read(written: &str, bound_to: Option<&str>, text: &str) -> (String, Option<String>, String) {
        (written.into(), bound_to.map(Into::into), text.into())
    }

    #[test]
    fn a_loop_variable_stands_for_an_item_of_its_list() {
        assert_eq!(
            reads("{% for s in mcp_servers %}{% for r in s.resources %}{{ r.urii }}{% endfor %}{% endfor %}"),
            [
                read("s.resources", Some("mcp_servers"), "s.resources"),
                read("r.urii", Some("mcp_servers.resources"), "r.urii"),
            ]
        );
    }

    #[test]
    fn names_the_template_does_not_set_are_read_as_they_are() {
        assert_eq!(
            reads("{{ tool.nme }}{% for p in tool.parameters | selectattr('required') %}{{ p['instrucion'] }}{% endfor %}"),
            [
                read("tool.nme", None, "tool.nme"),
                read("tool.parameters", None, "tool.parameters"),
                read("p.instrucion", Some("tool.parameters"), "p['instrucion']"),
            ]
        );
    }

    #[test]
    fn names_set_from_something_else_are_not_followed() {
        // A macro's argument, a name set in a branch, a pair's parts, a method's name.
        assert_eq!(
            reads(
                "{% macro m(r) %}{{ r.x }}{% endmacro %}\
                 {% if a %}{% set s = mcp_servers %}{% endif %}{% for x in s %}{{ x.y }}{% endfor %}\
                 {% for k, v in extra | items %}{{ v.z }}{% endfor %}{{ extra.items() }}"
            ),
            Vec::new()
        );
    }

    #[test]
    fn each_field_s_read_ends_where_it_is_written() {
        let source = "{% for r in roots %}{{ r.path[\"first\"].x }}{% endfor %}";
        let ast = parse(source, "t", SyntaxConfig::default()).unwrap();
        let reads = find_item_reads(&ast);
        let ends: Vec<&str> = reads[0]
            .field_ends
            .iter()
            .map(|end| &source[reads[0].range.start..*end])
            .collect();
        assert_eq!(ends, ["r.path", "r.path[\"first\"]", "r.path[\"first\"].x"]);
    }

    #[test]
    fn an_include_may_set_any_name() {
        assert_eq!(
            reads("{% for s in mcp_servers %}{{ s.a }}{% include 'p' %}{{ s.b }}{{ tool.x }}{% endfor %}{% for s in mcp_servers %}{{ s.c }}{% endfor %}{% if x %}{% include 'q' %}{% endif %}{{ tool.y }}"),
            [
                read("s.a", Some("mcp_servers"), "s.a"),
                read("s.c", Some("mcp_servers"), "s.c"),
            ]
        );
    }

    #[test]
    fn what_a_recursive_loop_a_macro_or_a_dotted_key_reads_is_not_followed() {
        assert_eq!(
            reads(
                "{% for s in mcp_servers recursive %}{{ s.x }}{{ loop(s.tools) }}{% endfor %}\
                   {% set r = browser %}{% macro m() %}{{ r.team }}{{ tool.z }}{% endmacro %}\
                   {% set t = rule_toggles %}{{ t['AGENTS.md'] }}{{ r.enabled }}"
            ),
            [read("r.enabled", Some("browser"), "r.enabled")]
        );
    }

    #[test]
    fn a_value_set_from_a_path_is_that_path() {
        assert_eq!(
            reads("{% set roots = workspace_roots | sort(attribute='name') %}{% for r in roots %}{{ r.pth }}{% endfor %}{% with first = roots[0] %}{{ first.name }}{% endwith %}"),
            [
                read("r.pth", Some("workspace_roots"), "r.pth"),
                read("first.name", Some("workspace_roots"), "first.name"),
            ]
        );
    }
}
