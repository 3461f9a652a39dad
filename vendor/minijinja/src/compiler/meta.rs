use std::collections::HashSet;
use std::fmt::Write;

use crate::compiler::ast;

struct AssignmentTracker<'a> {
    out: HashSet<&'a str>,
    nested_out: Option<HashSet<String>>,
    assigned: Vec<HashSet<&'a str>>,
    // promptc patch: what `find_unset` needs (see there). Each scope of `assigned` has a
    // `Scope`: whether a render gives it a frame of its own, and the names set in it.
    scopes: Vec<Scope<'a>>,
    /// The frame a macro whose body is being walked was defined in.
    macro_frame: Option<usize>,
    /// Names a macro body read that nothing had set yet, with the frame the macro was
    /// defined in: a name set later in that frame reaches the macro through its closure.
    pending: Vec<(&'a str, usize, u32)>,
    /// Names read where nothing had set them and nothing set later can reach the read.
    unset: HashSet<&'a str>,
    /// promptc patch: where each unset name is first read (its byte offset in the source),
    /// for a report at the read, not at the first place the name's letters stand.
    unset_at: std::collections::HashMap<&'a str, u32>,
    /// Blocks render after the template's top level (it extends another).
    deferred_blocks: bool,
    /// Names read only where the render asks whether they are defined (`x is defined`,
    /// `x | default(…)`, or inside `{% if x is defined %}`): a template may leave them
    /// undefined on purpose.
    guarded_reads: HashSet<&'a str>,
    /// The names the statements being walked are guarded by (see `guarded_reads`).
    guards: Vec<&'a str>,
}

#[derive(Default)]
struct Scope<'a> {
    /// A frame of the render's (a loop's or `with`'s body, a macro's, a block's), not a
    /// branch of an `if`, which runs in the frame around it.
    frame: bool,
    /// For a macro body's frame, the frame the macro was defined in.
    macro_frame: Option<usize>,
    /// The names set in this frame by the statements walked so far (for a branch, none: its
    /// names are set in its frame).
    set: HashSet<&'a str>,
}

impl<'a> AssignmentTracker<'a> {
    fn is_assigned(&self, name: &str) -> bool {
        self.assigned.iter().any(|x| x.contains(name))
    }

    fn assign(&mut self, name: &'a str) {
        self.assigned.last_mut().unwrap().insert(name);
    }

    /// promptc patch: a name the template sets, as distinct from one `assign` marks as
    /// looked up already.
    fn set(&mut self, name: &'a str) {
        self.assign(name);
        let frame = self.frame();
        self.scopes[frame].set.insert(name);
    }

    /// The innermost scope that is a frame of the render's.
    fn frame(&self) -> usize {
        self.scopes
            .iter()
            .rposition(|scope| scope.frame)
            .unwrap_or(0)
    }

    /// A name looked up where nothing set it: unset, unless a macro body reads it and its
    /// frame may still set it, or the render asked first whether it is defined.
    fn read_unset(&mut self, name: &'a str, at: u32) {
        if self.guards.contains(&name) {
            self.guarded_reads.insert(name);
            return;
        }
        match self.macro_frame {
            Some(frame) => self.pending.push((name, frame, at)),
            None => self.unset_read(name, at),
        }
    }

    /// `name` unset, read first at `at` unless an earlier read was found.
    fn unset_read(&mut self, name: &'a str, at: u32) {
        self.unset.insert(name);
        let first = self.unset_at.entry(name).or_insert(at);
        *first = (*first).min(at);
    }

    /// The reads of macros defined in the frame at `index`, which is ending: a name the frame
    /// has set by now was there for a call, the others are unset (or, for a macro body's frame,
    /// left to the frame its macro was defined in).
    fn settle(&mut self, index: usize) {
        let outer = self.scopes.get(index).and_then(|scope| scope.macro_frame);
        let pending = std::mem::take(&mut self.pending);
        for (name, frame, at) in pending {
            if frame != index {
                self.pending.push((name, frame, at));
            } else if self.scopes[index].set.contains(name) {
                continue;
            } else if let Some(outer) = outer {
                self.pending.push((name, outer, at));
            } else {
                self.unset_read(name, at);
            }
        }
    }

    fn assign_nested(&mut self, name: String) {
        if let Some(ref mut nested_out) = self.nested_out {
            if !nested_out.contains(&name) {
                nested_out.insert(name);
            }
        }
    }

    fn push(&mut self) {
        self.assigned.push(Default::default());
        self.scopes.push(Scope {
            frame: true,
            ..Scope::default()
        });
    }

    fn pop(&mut self) {
        self.assigned.pop();
        self.settle(self.scopes.len() - 1);
        self.scopes.pop();
    }

    fn new(nested_out: Option<HashSet<String>>) -> Self {
        AssignmentTracker {
            out: HashSet::new(),
            nested_out,
            assigned: vec![Default::default()],
            scopes: vec![Scope {
                frame: true,
                ..Scope::default()
            }],
            macro_frame: None,
            pending: Vec::new(),
            unset: HashSet::new(),
            unset_at: std::collections::HashMap::new(),
            deferred_blocks: false,
            guarded_reads: HashSet::new(),
            guards: Vec::new(),
        }
    }
}

/// Finds all variables that need to be captured as closure for a macro.
#[cfg(feature = "macros")]
pub fn find_macro_closure<'a>(m: &ast::Macro<'a>) -> HashSet<&'a str> {
    let mut state = AssignmentTracker::new(None);
    tracker_visit_macro(m, &mut state, false);
    state.out
}

/// Finds all variables that are undeclared in a template.
pub fn find_undeclared(t: &ast::Stmt<'_>, track_nested: bool) -> HashSet<String> {
    let mut state = AssignmentTracker::new(if track_nested {
        Some(HashSet::new())
    } else {
        None
    });
    track_walk(t, &mut state);
    if let Some(nested) = state.nested_out {
        nested
    } else {
        state.out.into_iter().map(|x| x.to_string()).collect()
    }
}

/// promptc patch: what a template's names are to a check of names defined nowhere.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Unset {
    /// Names the template may read before anything sets them (`find_undeclared`'s, less
    /// `late`).
    pub names: HashSet<String>,
    /// Names only macro bodies read, each set later in the frame its macro is defined in: a
    /// call after the set finds it through the macro's closure, and one before it finds the
    /// context's value, if any. `find_undeclared` counts them, as a render may look them up.
    pub late: HashSet<String>,
    /// Names the template reads only asking whether they are defined (`x is defined`,
    /// `x | default(…)`, inside `{% if x is defined %}`): it may leave them undefined on
    /// purpose. `find_undeclared` counts them too.
    pub guarded: HashSet<String>,
    /// Names the template sets in its top frame, which reach a template that includes it
    /// (an include renders in the includer's frame).
    pub set: HashSet<String>,
    /// Where each of `names` is first read unset: the byte offset of the read in the source.
    pub first_read: std::collections::HashMap<String, u32>,
}

impl Unset {
    /// Every name a render may read: `find_undeclared`'s.
    pub fn all(&self) -> impl Iterator<Item = &String> {
        self.names.iter().chain(&self.late).chain(&self.guarded)
    }
}

/// promptc patch: the names of a template read where nothing set them, those a macro may
/// find set later, and those it sets in its top frame.
pub fn find_unset(t: &ast::Stmt<'_>) -> Unset {
    let mut state = AssignmentTracker::new(None);
    // A template that extends another renders its blocks when the layout calls them, after
    // its own top level has run: its blocks see what that sets, as a macro does.
    #[cfg(feature = "multi_template")]
    if let ast::Stmt::Template(template) = t {
        state.deferred_blocks = template
            .children
            .iter()
            .any(|child| matches!(child, ast::Stmt::Extends(_)));
    }
    track_walk(t, &mut state);
    state.settle(0);
    let owned = |names: &HashSet<&str>| names.iter().map(|x| x.to_string()).collect();
    let guarded: HashSet<&str> = state
        .guarded_reads
        .difference(&state.unset)
        .copied()
        .collect();
    let late = state
        .out
        .difference(&state.unset)
        .filter(|name| !guarded.contains(*name))
        .copied()
        .collect();
    Unset {
        names: owned(&state.unset),
        late: owned(&late),
        guarded: owned(&guarded),
        set: owned(&state.scopes[0].set),
        first_read: state
            .unset_at
            .iter()
            .map(|(name, at)| (name.to_string(), *at))
            .collect(),
    }
}

fn tracker_visit_expr_opt<'a>(expr: &Option<ast::Expr<'a>>, state: &mut AssignmentTracker<'a>) {
    if let Some(expr) = expr {
        tracker_visit_expr(expr, state);
    }
}

#[cfg(feature = "macros")]
fn tracker_visit_macro<'a>(
    m: &ast::Macro<'a>,
    state: &mut AssignmentTracker<'a>,
    declare_caller: bool,
) {
    if declare_caller {
        // this is not completely correct as caller is actually only defined
        // if the macro was used in the context of a call block.  However it
        // is impossible to determine this at compile time so we err on the
        // side of assuming caller is there.
        state.assign("caller");
    }
    // promptc patch: in the order a call runs them. The arguments are assigned last to
    // first, each default computed just before its argument, while the arguments before it
    // are not yet set: `{% macro f(mode=mode) %}` reads the `mode` outside, which the
    // tracker took for the argument.
    let mut defaults = m.defaults.iter().rev();
    for arg in m.args.iter().rev() {
        if let Some(default) = defaults.next() {
            tracker_visit_expr(default, state);
        }
        track_assign(arg, state);
    }
    m.body.iter().for_each(|node| track_walk(node, state));
}

/// promptc patch: a macro defined here, its body walked in a frame of its own, its reads of
/// names not yet set left pending until the frame it is defined in ends (see `settle`).
#[cfg(feature = "macros")]
fn track_macro_body<'a>(m: &ast::Macro<'a>, state: &mut AssignmentTracker<'a>) {
    let defined_in = state.frame();
    let outer_macro = state.macro_frame.replace(defined_in);
    state.push();
    if let Some(scope) = state.scopes.last_mut() {
        scope.macro_frame = Some(defined_in);
    }
    tracker_visit_macro(m, state, true);
    state.pop();
    state.macro_frame = outer_macro;
}

fn tracker_visit_callarg<'a>(callarg: &ast::CallArg<'a>, state: &mut AssignmentTracker<'a>) {
    match callarg {
        ast::CallArg::Pos(expr)
        | ast::CallArg::Kwarg(_, expr)
        | ast::CallArg::PosSplat(expr)
        | ast::CallArg::KwargSplat(expr) => tracker_visit_expr(expr, state),
    }
}

fn tracker_visit_expr<'a>(expr: &ast::Expr<'a>, state: &mut AssignmentTracker<'a>) {
    match expr {
        ast::Expr::Var(var) => {
            if !state.is_assigned(var.id) {
                state.out.insert(var.id);
                state.read_unset(var.id, var.span().start_offset);
                // if we are not tracking nested assignments, we can consider a variable
                // to be assigned the first time we perform a lookup.
                if state.nested_out.is_none() {
                    state.assign(var.id);
                } else {
                    state.assign_nested(var.id.to_string());
                }
            }
        }
        ast::Expr::Const(_) => {}
        ast::Expr::UnaryOp(expr) => tracker_visit_expr(&expr.expr, state),
        ast::Expr::BinOp(expr) => {
            tracker_visit_expr(&expr.left, state);
            // promptc patch: the right side of `x is defined and …` (or of
            // `x is undefined or …`) runs only with `x` defined: it reads `x` guarded.
            let mut defined = Vec::new();
            match expr.op {
                ast::BinOpKind::ScAnd => defined_when(&expr.left, true, &mut defined),
                ast::BinOpKind::ScOr => defined_when(&expr.left, false, &mut defined),
                _ => {}
            }
            let guards = state.guards.len();
            state.guards.extend(defined);
            tracker_visit_expr(&expr.right, state);
            state.guards.truncate(guards);
        }
        ast::Expr::Compare(expr) => {
            tracker_visit_expr(&expr.expr, state);
            expr.ops
                .iter()
                .for_each(|op| tracker_visit_expr(&op.expr, state));
        }
        ast::Expr::IfExpr(expr) => {
            tracker_visit_expr(&expr.test_expr, state);
            // promptc patch: as the branches of an `if` statement (see `IfCond`).
            let guards = state.guards.len();
            let mut defined = Vec::new();
            defined_when(&expr.test_expr, true, &mut defined);
            state.guards.extend(defined.drain(..));
            tracker_visit_expr(&expr.true_expr, state);
            state.guards.truncate(guards);
            defined_when(&expr.test_expr, false, &mut defined);
            state.guards.extend(defined);
            tracker_visit_expr_opt(&expr.false_expr, state);
            state.guards.truncate(guards);
        }
        // promptc patch: `x | default(…)` reads `x` asking whether it is defined (the paths a
        // template reads, `track_nested`, are found as before).
        ast::Expr::Filter(expr)
            if matches!(expr.name, "default" | "d")
                && state.nested_out.is_none()
                && guarded_var(expr.expr.as_ref(), state).is_some() =>
        {
            if let Some(name) = guarded_var(expr.expr.as_ref(), state) {
                state.out.insert(name);
                state.guarded_reads.insert(name);
            }
            expr.args
                .iter()
                .for_each(|x| tracker_visit_callarg(x, state));
        }
        ast::Expr::Filter(expr) => {
            tracker_visit_expr_opt(&expr.expr, state);
            expr.args
                .iter()
                .for_each(|x| tracker_visit_callarg(x, state));
        }
        // promptc patch: `x is defined` reads `x` asking whether it is defined.
        ast::Expr::Test(expr)
            if matches!(expr.name, "defined" | "undefined")
                && state.nested_out.is_none()
                && guarded_var(Some(&expr.expr), state).is_some() =>
        {
            if let Some(name) = guarded_var(Some(&expr.expr), state) {
                state.out.insert(name);
                state.guarded_reads.insert(name);
            }
            expr.args
                .iter()
                .for_each(|x| tracker_visit_callarg(x, state));
        }
        ast::Expr::Test(expr) => {
            tracker_visit_expr(&expr.expr, state);
            expr.args
                .iter()
                .for_each(|x| tracker_visit_callarg(x, state));
        }
        ast::Expr::GetAttr(expr) => {
            // if we are tracking nested, we check if we have a chain of attribute
            // lookups that terminate in a variable lookup.  In that case we can
            // assign the nested lookup.
            if state.nested_out.is_some() {
                let mut attrs = vec![expr.name];
                let mut ptr = &expr.expr;
                loop {
                    match ptr {
                        ast::Expr::Var(var) => {
                            if !state.is_assigned(var.id) {
                                let mut rv = var.id.to_string();
                                for attr in attrs.iter().rev() {
                                    write!(rv, ".{attr}").ok();
                                }
                                state.assign_nested(rv);
                                return;
                            } else {
                                break;
                            }
                        }
                        ast::Expr::GetAttr(expr) => {
                            attrs.push(expr.name);
                            ptr = &expr.expr;
                            continue;
                        }
                        _ => break,
                    }
                }
            }
            tracker_visit_expr(&expr.expr, state)
        }
        ast::Expr::GetItem(expr) => {
            tracker_visit_expr(&expr.expr, state);
            tracker_visit_expr(&expr.subscript_expr, state);
        }
        ast::Expr::Slice(slice) => {
            // promptc patch: what is sliced is looked up first (`cwd[:4]` reads `cwd`).
            tracker_visit_expr(&slice.expr, state);
            tracker_visit_expr_opt(&slice.start, state);
            tracker_visit_expr_opt(&slice.stop, state);
            tracker_visit_expr_opt(&slice.step, state);
        }
        ast::Expr::Call(expr) => {
            // promptc patch: `self.name()` renders a block, which reads no `self`.
            // `super()` renders the parent block: a render looks up no `super` for it (a
            // bare `super`, not called, is a name looked up like any other).
            #[cfg(feature = "multi_template")]
            let is_block = matches!(
                expr.identify_call(),
                ast::CallType::Block(_) | ast::CallType::Function("super")
            );
            #[cfg(not(feature = "multi_template"))]
            let is_block = false;
            if !is_block {
                match &expr.expr {
                    // promptc patch: a method call (`extra.get("k")`, `cwd.split("/")`) reads
                    // the value it is called on, whole: `get` is no key of `extra`.
                    ast::Expr::GetAttr(method) => tracker_visit_expr(&method.expr, state),
                    callee => tracker_visit_expr(callee, state),
                }
            }
            expr.args
                .iter()
                .for_each(|x| tracker_visit_callarg(x, state));
        }
        ast::Expr::List(expr) => expr.items.iter().for_each(|x| tracker_visit_expr(x, state)),
        ast::Expr::Tuple(expr) => expr.items.iter().for_each(|x| tracker_visit_expr(x, state)),
        ast::Expr::Map(expr) => expr.keys.iter().zip(expr.values.iter()).for_each(|(k, v)| {
            tracker_visit_expr(k, state);
            tracker_visit_expr(v, state);
        }),
    }
}

fn track_assign<'a>(expr: &ast::Expr<'a>, state: &mut AssignmentTracker<'a>) {
    match expr {
        ast::Expr::Var(var) => state.set(var.id),
        ast::Expr::List(list) => list.items.iter().for_each(|x| track_assign(x, state)),
        ast::Expr::Tuple(tuple) => tuple.items.iter().for_each(|x| track_assign(x, state)),
        // promptc patch: `{% set ns.x = … %}` looks `ns` up to set its attribute.
        ast::Expr::GetAttr(attr) => tracker_visit_expr(&attr.expr, state),
        _ => {}
    }
}

/// promptc patch: the name a `default` filter or a `defined` test asks about, when it is a
/// name nothing has set yet.
fn guarded_var<'a>(expr: Option<&ast::Expr<'a>>, state: &AssignmentTracker<'a>) -> Option<&'a str> {
    match expr? {
        ast::Expr::Var(var) if !state.is_assigned(var.id) => Some(var.id),
        _ => None,
    }
}

/// promptc patch: the names a condition being `holds` (true or false) shows defined:
/// `x is defined` when true, `x is undefined` (or `not x is defined`) when false, through
/// `and` (true) and `or` (false).
fn defined_when<'a>(expr: &ast::Expr<'a>, holds: bool, out: &mut Vec<&'a str>) {
    match expr {
        ast::Expr::Test(test) => {
            if let ast::Expr::Var(var) = &test.expr {
                if (test.name == "defined" && holds) || (test.name == "undefined" && !holds) {
                    out.push(var.id);
                }
            }
        }
        ast::Expr::UnaryOp(op) if matches!(op.op, ast::UnaryOpKind::Not) => {
            defined_when(&op.expr, !holds, out)
        }
        ast::Expr::BinOp(op) => match (op.op, holds) {
            (ast::BinOpKind::ScAnd, true) | (ast::BinOpKind::ScOr, false) => {
                defined_when(&op.left, holds, out);
                defined_when(&op.right, holds, out);
            }
            _ => {}
        },
        _ => {}
    }
}

/// promptc patch: walks statements that run only sometimes (a branch of an `if`, a loop's
/// `else`) in a scope of their own, and returns the names they assign, which the statements
/// after them see only when the branch ran.
fn track_branch<'a>(body: &[ast::Stmt<'a>], state: &mut AssignmentTracker<'a>) -> HashSet<&'a str> {
    state.assigned.push(Default::default());
    state.scopes.push(Scope::default());
    body.iter().for_each(|x| track_walk(x, state));
    state.scopes.pop();
    state.assigned.pop().unwrap_or_default()
}

fn track_walk<'a>(node: &ast::Stmt<'a>, state: &mut AssignmentTracker<'a>) {
    // promptc patch: the tracker follows what a render does, in its order, so that the
    // names it returns hold every name a render can look up: promptc reuses a render for
    // another context when those names have the same values there. It marked a name set
    // before looking at the value set (`{% set mode = mode %}`, `{% with a = a %}`, a set
    // block reading its own name), took `self` as set though a render looks it up like any
    // name, skipped the filter of a `{% filter %}` or set block and the value of
    // `{% autoescape %}`, and looked at a loop's iterable after marking `loop` set. It also
    // gave an `if`, a `{% filter %}`, a set block and `{% autoescape %}` a scope of their
    // own, which a render does not: a name set in both branches of an `if`, or in one of
    // those blocks, is set for what follows.
    match node {
        ast::Stmt::Template(stmt) => {
            stmt.children.iter().for_each(|x| track_walk(x, state));
        }
        ast::Stmt::EmitExpr(expr) => tracker_visit_expr(&expr.expr, state),
        ast::Stmt::EmitRaw(_) => {}
        ast::Stmt::ForLoop(stmt) => {
            tracker_visit_expr(&stmt.iter, state);
            state.push();
            track_assign(&stmt.target, state);
            // The filter runs without the loop variable.
            tracker_visit_expr_opt(&stmt.filter_expr, state);
            state.assign("loop");
            stmt.body.iter().for_each(|x| track_walk(x, state));
            state.pop();
            // The `else` runs after the loop's scope has ended, when it made no turn.
            track_branch(&stmt.else_body, state);
        }
        ast::Stmt::IfCond(stmt) => {
            tracker_visit_expr(&stmt.expr, state);
            // promptc patch: a branch taken only when a name is defined reads it guarded,
            // and a name the other branch sets is set after the `if` either way
            // (`{% if tone is not defined %}{% set tone = "plain" %}{% endif %}`).
            let mut defined_if_true = Vec::new();
            let mut defined_if_false = Vec::new();
            defined_when(&stmt.expr, true, &mut defined_if_true);
            defined_when(&stmt.expr, false, &mut defined_if_false);
            let guards = state.guards.len();
            state.guards.extend(defined_if_true.iter().copied());
            let when_true = track_branch(&stmt.true_body, state);
            state.guards.truncate(guards);
            state.guards.extend(defined_if_false.iter().copied());
            let when_false = track_branch(&stmt.false_body, state);
            state.guards.truncate(guards);
            for name in when_true.intersection(&when_false) {
                state.assign(name);
            }
            for name in defined_if_false
                .iter()
                .filter(|name| when_true.contains(*name))
            {
                state.assign(name);
            }
            for name in defined_if_true
                .iter()
                .filter(|name| when_false.contains(*name))
            {
                state.assign(name);
            }
        }
        ast::Stmt::WithBlock(stmt) => {
            state.push();
            for (target, expr) in &stmt.assignments {
                tracker_visit_expr(expr, state);
                track_assign(target, state);
            }
            stmt.body.iter().for_each(|x| track_walk(x, state));
            state.pop();
        }
        ast::Stmt::Set(stmt) => {
            tracker_visit_expr(&stmt.expr, state);
            track_assign(&stmt.target, state);
        }
        ast::Stmt::AutoEscape(stmt) => {
            tracker_visit_expr(&stmt.enabled, state);
            stmt.body.iter().for_each(|x| track_walk(x, state));
        }
        ast::Stmt::FilterBlock(stmt) => {
            stmt.body.iter().for_each(|x| track_walk(x, state));
            tracker_visit_expr(&stmt.filter, state);
        }
        ast::Stmt::SetBlock(stmt) => {
            stmt.body.iter().for_each(|x| track_walk(x, state));
            tracker_visit_expr_opt(&stmt.filter, state);
            track_assign(&stmt.target, state);
        }
        #[cfg(feature = "multi_template")]
        ast::Stmt::Block(stmt) => {
            let defined_in = state.frame();
            let deferred = state.deferred_blocks;
            let outer_macro = state.macro_frame;
            if deferred {
                state.macro_frame = Some(defined_in);
            }
            state.push();
            if deferred {
                if let Some(scope) = state.scopes.last_mut() {
                    scope.macro_frame = Some(defined_in);
                }
            }
            stmt.body.iter().for_each(|x| track_walk(x, state));
            state.pop();
            state.macro_frame = outer_macro;
        }
        // promptc patch: a template's name may be computed from names it reads.
        #[cfg(feature = "multi_template")]
        ast::Stmt::Extends(stmt) => tracker_visit_expr(&stmt.name, state),
        #[cfg(feature = "multi_template")]
        ast::Stmt::Include(stmt) => tracker_visit_expr(&stmt.name, state),
        #[cfg(feature = "multi_template")]
        ast::Stmt::Import(stmt) => {
            tracker_visit_expr(&stmt.expr, state);
            track_assign(&stmt.name, state);
        }
        #[cfg(feature = "multi_template")]
        ast::Stmt::FromImport(stmt) => {
            tracker_visit_expr(&stmt.expr, state);
            stmt.names.iter().for_each(|(arg, alias)| {
                track_assign(alias.as_ref().unwrap_or(arg), state);
            })
        }
        #[cfg(feature = "macros")]
        ast::Stmt::Macro(stmt) => {
            state.set(stmt.name);
            track_macro_body(stmt, state);
        }
        #[cfg(feature = "macros")]
        ast::Stmt::CallBlock(stmt) => {
            tracker_visit_expr(&stmt.call.expr, state);
            stmt.call
                .args
                .iter()
                .for_each(|x| tracker_visit_callarg(x, state));
            // The caller runs at once, not later: the names its frame sets afterwards are
            // not there for it, and its reads are those of the frame around it.
            state.push();
            tracker_visit_macro(&stmt.macro_decl, state, true);
            state.pop();
        }
        #[cfg(feature = "loop_controls")]
        ast::Stmt::Continue(_) | ast::Stmt::Break(_) => {}
        ast::Stmt::Do(stmt) => {
            tracker_visit_expr(&stmt.call.expr, state);
            stmt.call
                .args
                .iter()
                .for_each(|x| tracker_visit_callarg(x, state));
        }
    }
}
