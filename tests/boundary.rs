//! The trust boundary on disk: a workspace (or a git revision of one) from an unreviewed pull
//! request never makes promptc read, write or delete outside the workspace, leaves no litter,
//! and writes its outputs all or nothing. Each test builds the hostile layout it answers.

#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test that cannot proceed fails

mod common;

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{Fixture, Workspace, git};

const OUTPUT: &str = "examples/prompts/generic/basic.md";

/// The minimal fixture with a second family, `xs`, so the matrix has two output folders.
fn two_families() -> Fixture {
    Fixture::minimal()
        .file(
            "variants/xs.toml",
            "id = \"xs\"\nextends = \"generic\"\n[placeholders]\nX = \"1\"\n",
        )
        .file(
            "promptc.toml",
            format!(
                "{}[build]\nfamilies = [\"generic\", \"xs\"]\n",
                common::MANIFEST
            ),
        )
}

/// Every file below `dir`, relative, sorted: to show that nothing was added or changed.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = walk(dir)
        .into_iter()
        .map(|path| {
            let bytes = std::fs::read(&path).unwrap_or_default();
            (path.strip_prefix(dir).unwrap().display().to_string(), bytes)
        })
        .collect();
    files.sort();
    files
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            found.extend(walk(&entry.path()));
        } else {
            found.push(entry.path());
        }
    }
    found
}

fn git_stdin(dir: &Path, args: &[&str], input: &str) -> String {
    use std::io::Write;
    let mut child = common::isolated_git(&mut Command::new("git"))
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

/// The workspace as a git repository with one commit.
fn repository(fixture: &Fixture) -> Workspace {
    let workspace = fixture.write();
    git(workspace.root(), &["init", "-q", "-b", "main"]);
    git(workspace.root(), &["add", "-A"]);
    git(workspace.root(), &["commit", "-q", "-m", "initial"]);
    workspace
}

// Item 1: a crafted tree with `..` entries, in a folder the workspace reads.
#[test]
fn diff_of_a_crafted_revision_writes_nothing_outside_its_temporary_folder() {
    let workspace = repository(&Fixture::minimal());
    let root = workspace.root();
    let blob = git_stdin(root, &["hash-object", "-w", "--stdin"], "EVIL\n");
    let mut tree = git_stdin(
        root,
        &["mktree"],
        &format!("100644 blob {blob}\tPWNED.txt\n"),
    );
    for name in ["x", "..", ".."] {
        tree = git_stdin(root, &["mktree"], &format!("040000 tree {tree}\t{name}\n"));
    }
    let mut listing = git(root, &["ls-tree", "HEAD:components"]);
    listing.push('\n');
    listing.push_str(&git(root, &["cat-file", "-p", &tree]));
    listing.push('\n');
    let components = git_stdin(root, &["mktree"], &listing);
    let listing = git(root, &["ls-tree", "HEAD"])
        .lines()
        .map(|line| match line.strip_suffix("\tcomponents") {
            Some(_) => format!("040000 tree {components}\tcomponents\n"),
            None => format!("{line}\n"),
        })
        .collect::<String>();
    let top = git_stdin(root, &["mktree"], &listing);
    let commit = git(root, &["commit-tree", &top, "-p", "HEAD", "-m", "x"]);

    // Temporary folders go below `tmp/t`: an escape of two levels lands in `tmp`.
    let tmp = workspace.tmp().join("tmp");
    std::fs::create_dir_all(tmp.join("t")).unwrap();
    let output = workspace
        .command()
        .env("TMPDIR", tmp.join("t"))
        .args(["diff", "--base", &commit, "--stat"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stdout.contains("invalid path"), "{stdout}\n{stderr}");
    for place in [&tmp, workspace.tmp(), root] {
        assert!(!place.join("PWNED.txt").exists(), "written in {place:?}");
    }
    // The temporary folder is gone too.
    assert_eq!(std::fs::read_dir(tmp.join("t")).unwrap().count(), 0);
}

// Item 1: symbolic links in a revision lead neither reads nor writes outside.
#[test]
fn a_link_in_a_revision_is_not_followed_out_of_the_workspace() {
    let workspace = repository(&Fixture::minimal());
    let root = workspace.root();
    let secret = workspace.tmp().join("secret.md");
    std::fs::write(&secret, "SECRET-TEXT\n").unwrap();
    std::fs::remove_file(root.join("components/intro.md")).unwrap();
    symlink(&secret, root.join("components/intro.md")).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "link"]);
    // Back to a regular template in the working tree; the revision keeps its link.
    std::fs::remove_file(root.join("components/intro.md")).unwrap();
    std::fs::write(root.join("components/intro.md"), "Plain.\n").unwrap();
    let run = workspace.run(&["diff", "--base", "HEAD", "--format", "json"]);
    assert!(!run.stdout.contains("SECRET-TEXT"), "{}", run.stdout);
    assert!(!run.stderr.contains("SECRET-TEXT"), "{}", run.stderr);
    assert!(
        run.stdout.contains("outside the workspace")
            || run.stderr.contains("outside the workspace"),
        "stdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
}

// Item 2: a family folder that is a link out of the workspace.
#[test]
fn a_linked_output_folder_is_refused_for_writing_and_deleting() {
    let workspace = two_families().write();
    let elsewhere = workspace.tmp().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(elsewhere.join("basic.md"), "theirs").unwrap();
    std::fs::create_dir_all(workspace.root().join("examples/prompts")).unwrap();
    symlink(&elsewhere, workspace.root().join("examples/prompts/xs")).unwrap();

    let run = workspace.run(&["build", "--all"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        // Beside the workspace: relative to it, as a revision's copy is told of too.
        run.stderr.contains(
            "examples/prompts/xs is a symbolic link to ../elsewhere, outside the workspace"
        ),
        "{}",
        run.stderr
    );
    // Said after the error that is why, as the last line.
    assert!(
        run.stderr
            .trim_end()
            .ends_with("error: nothing was written"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_to_string(elsewhere.join("basic.md")).unwrap(),
        "theirs"
    );
    // All or nothing: the other family's output was not written either.
    assert!(!workspace.root().join(OUTPUT).exists());

    // A later build that drops the family does not delete through the link.
    std::fs::remove_file(workspace.root().join("examples/prompts/xs")).unwrap();
    let again = workspace.run(&["build", "--all"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    std::fs::remove_dir_all(workspace.root().join("examples/prompts/xs")).unwrap();
    symlink(&elsewhere, workspace.root().join("examples/prompts/xs")).unwrap();
    std::fs::write(
        workspace.root().join("promptc.toml"),
        format!("{}[build]\nfamilies = [\"generic\"]\n", common::MANIFEST),
    )
    .unwrap();
    let run = workspace.run(&["build", "--all"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(elsewhere.join("basic.md")).unwrap(),
        "theirs"
    );
    let run = workspace.run(&["check"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("examples/prompts/xs is a symbolic link"),
        "{}",
        run.stderr
    );
}

/// A template, a partial or a rules file that is a link to one of the build's outputs: a
/// build would read back what the last one wrote (its output grew on every build, and
/// `check` never passed; a partial ran a context's text, written into an output, as template
/// code). A template or partial so linked is an error at the link, and nothing is written; a
/// rules file so linked is skipped with a warning.
#[test]
fn a_link_from_a_workspace_file_to_an_output_is_refused() {
    let workspace = Fixture::minimal()
        .file(
            "examples/contexts/basic.toml",
            format!("{}rules_from = [\".\"]\n", common::CONTEXT),
        )
        .file(
            "components/intro.md",
            "Rules: {{ rules | length }}.{% include 'partials/note.md' %}\n",
        )
        .file("partials/note.md", " Noted.")
        .write();
    let root = workspace.root();
    let built = workspace.run(&["build", "--all"]);
    assert_eq!(built.code, 0, "{}", built.stderr);
    let output = std::fs::read_to_string(root.join(OUTPUT)).unwrap();
    assert!(output.contains("Rules: 0. Noted."), "{output}");

    // A rules file: skipped, said, and the build settles.
    symlink(OUTPUT, root.join("AGENTS.md")).unwrap();
    let built = workspace.run(&["build", "--all"]);
    assert_eq!(built.code, 0, "{}", built.stderr);
    assert!(
        built.stderr.contains(
            "rules file `./AGENTS.md` cannot be read (is a symbolic link to examples/prompts/generic/basic.md, in the output folder (`build.out`), which a build writes)"
        ),
        "{}",
        built.stderr
    );
    assert_eq!(std::fs::read_to_string(root.join(OUTPUT)).unwrap(), output);
    assert_eq!(workspace.run(&["check"]).code, 0);
    std::fs::remove_file(root.join("AGENTS.md")).unwrap();

    // A partial, and a component's template: errors at the link, nothing written.
    for link in ["partials/note.md", "components/intro.md"] {
        std::fs::remove_file(root.join(link)).unwrap();
        symlink(Path::new("..").join(OUTPUT), root.join(link)).unwrap();
        for args in [&["validate"][..], &["build", "--all"]] {
            let (command, run) = (args[0], workspace.run(args));
            assert_eq!(run.code, 1, "{link} {command}: {}", run.stderr);
            assert!(
                run.stderr.contains(&format!(
                    "error[path-refused]: `{link}` is a symbolic link to examples/prompts/generic/basic.md, in the output folder (`build.out`), which a build writes"
                )),
                "{link} {command}: {}",
                run.stderr
            );
            assert!(
                run.stderr.contains(&format!("--> {link}:1:1")),
                "{}",
                run.stderr
            );
        }
        assert_eq!(std::fs::read_to_string(root.join(OUTPUT)).unwrap(), output);
        std::fs::remove_file(root.join(link)).unwrap();
        std::fs::write(
            root.join(link),
            if link.starts_with("partials") {
                " Noted."
            } else {
                "Rules: {{ rules | length }}.{% include 'partials/note.md' %}\n"
            },
        )
        .unwrap();
    }
}

// Item 3: `build.out` below an existing link that leads out, and below a dangling one.
#[test]
fn an_output_folder_below_a_link_out_is_refused() {
    let fixture = Fixture::minimal().file(
        "promptc.toml",
        format!(
            "{}[build]\nout = \"examples/link/prompts\"\n",
            common::MANIFEST
        ),
    );
    let workspace = fixture.write();
    let elsewhere = workspace.tmp().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::create_dir_all(workspace.root().join("examples")).unwrap();
    symlink(&elsewhere, workspace.root().join("examples/link")).unwrap();
    let run = workspace.run(&["build", "--all"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("examples/link is a symbolic link to"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);

    std::fs::remove_dir(&elsewhere).unwrap();
    let run = workspace.run(&["build", "--all"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("error: examples/link is a symbolic link to nothing"),
        "{}",
        run.stderr
    );
    assert!(!elsewhere.exists());
}

// Item 4: committed outputs are read only as regular files inside the workspace.
#[test]
fn check_does_not_read_outputs_through_links_or_from_special_files() {
    let workspace = Fixture::minimal().write();
    assert_eq!(workspace.run(&["build", "--all"]).code, 0);
    let output = workspace.root().join(OUTPUT);
    let secret = workspace.tmp().join("secret");
    std::fs::write(&secret, "TOKEN=hunter2\n").unwrap();
    for target in [
        secret.as_path(),
        Path::new("/proc/self/environ"),
        Path::new("/dev/zero"),
    ] {
        std::fs::remove_file(&output).unwrap();
        symlink(target, &output).unwrap();
        for command in [&["check"][..], &["build", "--all"][..]] {
            let run = workspace.run(command);
            assert_eq!(run.code, 1, "{command:?} {target:?}: {}", run.stderr);
            assert!(
                run.stderr.contains(&format!("{OUTPUT} is a symbolic link")),
                "{command:?} {target:?}: {}",
                run.stderr
            );
            assert!(!run.stderr.contains("hunter2"), "{}", run.stderr);
        }
        // Not replaced: the link is the user's to remove.
        assert!(output.symlink_metadata().unwrap().file_type().is_symlink());
    }

    // A FIFO where the output belongs: refused at once, never opened.
    std::fs::remove_file(&output).unwrap();
    common::mkfifo(&output);
    let (status, stderr) = common::run_within(
        common::promptc_process()
            .current_dir(workspace.root())
            .arg("check"),
        Duration::from_secs(60),
        "check blocked on a FIFO",
    );
    assert_eq!(status.code(), Some(1));
    assert!(
        stderr.contains(&format!(
            "{OUTPUT} is a named pipe (FIFO), not a regular file"
        )),
        "{stderr}"
    );
}

// A data file whose name is not UTF-8 was read under its name with a replacement mark, and
// its template beside it was said to be missing (the help named a file that exists). It is
// refused by its name.
#[test]
fn a_file_name_that_is_not_utf8_is_refused_by_its_name() {
    let workspace = Fixture::minimal().write();
    let components = workspace.root().join("components");
    let name = |extension: &str| {
        let mut bytes = b"bad\xff.".to_vec();
        bytes.extend_from_slice(extension.as_bytes());
        components.join(std::ffi::OsStr::from_bytes(&bytes))
    };
    std::fs::write(name("toml"), "id = \"bad\"\ndescription = \"x\"\n").unwrap();
    std::fs::write(name("md"), "Text.\n").unwrap();
    let report = workspace.validate();
    let found = report.single();
    assert_eq!(found.code, "path-refused", "{found:?}");
    assert!(
        found.message.contains("has a name that is not valid UTF-8"),
        "{}",
        found.message
    );
    assert_eq!(
        report.help(0),
        Some("rename it with a UTF-8 name: ids and template names are read from file names")
    );
}

// Two `build --all` runs at once in one workspace (a file watcher, a save hook): each took the
// other's temporary files, about to be renamed into place, for a killed build's leftovers and
// removed them, and the other failed with "No such file or directory". A temporary file is
// named by the process that writes it, and one of a process still running is left alone
// (`check` does not call it stray either); one of a process that has ended is removed.
#[cfg(target_os = "linux")]
#[test]
fn a_build_leaves_the_temporary_files_of_a_build_running_beside_it() {
    let workspace = Fixture::minimal().write();
    assert_eq!(workspace.run(&["build", "--all"]).code, 0);
    let folder = workspace.root().join("examples/prompts/generic");
    let namespace = std::fs::read_link("/proc/self/ns/pid").unwrap();
    let namespace = namespace
        .to_str()
        .unwrap()
        .trim_start_matches("pid:[")
        .trim_end_matches(']')
        .to_string();
    let mut running = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let mut ended = std::process::Command::new("true").spawn().unwrap();
    ended.wait().unwrap();
    let live = format!(".promptc-tmp-{namespace}.{}-Ab12Cd", running.id());
    let gone = format!(".promptc-tmp-{namespace}.{}-Ef34Gh", ended.id());
    std::fs::write(folder.join(&live), "being written").unwrap();
    std::fs::write(folder.join(&gone), "half").unwrap();
    let check = workspace.run(&["check"]);
    assert_eq!(check.code, 1, "{}", check.stderr);
    assert!(
        check
            .stderr
            .contains(&format!("stray: examples/prompts/generic/{gone}")),
        "{}",
        check.stderr
    );
    assert!(!check.stderr.contains(&live), "{}", check.stderr);
    let build = workspace.run(&["build", "--all"]);
    assert_eq!(build.code, 0, "{}", build.stderr);
    assert!(folder.join(&live).exists());
    assert!(!folder.join(&gone).exists());
    // Once its process has ended, it is a leftover like any other.
    running.kill().unwrap();
    running.wait().unwrap();
    let build = workspace.run(&["build", "--all"]);
    assert_eq!(build.code, 0, "{}", build.stderr);
    assert!(!folder.join(&live).exists(), "{}", build.stderr);
    assert_eq!(workspace.run(&["check"]).code, 0);
}

// A file in an output folder that promptc did not write (notes, a copy kept by hand) made
// `check` fail while `build --all` passed without a word: the build a user runs to fix
// `check` now tells of it, and leaves it as it is.
#[test]
fn a_build_tells_of_a_file_in_the_output_folder_that_check_fails_on() {
    let workspace = Fixture::minimal().write();
    assert_eq!(workspace.run(&["build", "--all"]).code, 0);
    let folder = workspace.root().join("examples/prompts/generic");
    std::fs::write(folder.join("notes.md"), "someone's own notes").unwrap();
    let build = workspace.run(&["build", "--all"]);
    assert_eq!(build.code, 0, "{}", build.stderr);
    assert!(
        build.stderr.contains(
            "warning: examples/prompts/generic/notes.md is not an output of the build matrix, and promptc did not write it: it is left as it is, but `promptc check` fails until it is moved or deleted"
        ),
        "{}",
        build.stderr
    );
    assert!(folder.join("notes.md").exists());
    assert_eq!(workspace.run(&["check"]).code, 1);
    // A quiet build tells it too: it is a problem, not progress.
    let quiet = workspace.run(&["build", "--all", "-q"]);
    assert!(
        quiet.stderr.contains("notes.md is not an output"),
        "{}",
        quiet.stderr
    );
    std::fs::remove_file(folder.join("notes.md")).unwrap();
    let build = workspace.run(&["build", "--all"]);
    assert!(!build.stderr.contains("warning"), "{}", build.stderr);
    assert_eq!(workspace.run(&["check"]).code, 0);
}

// Item 8: temporary files left by a killed build are recognised, reported and cleaned up.
#[test]
fn temporary_files_left_behind_are_reported_and_removed() {
    let workspace = Fixture::minimal().write();
    assert_eq!(workspace.run(&["build", "--all"]).code, 0);
    let folder = workspace.root().join("examples/prompts/generic");
    std::fs::write(folder.join(".promptc-tmp-Ab12Cd"), "half").unwrap();
    std::fs::write(folder.join(".tmpXy34Zw"), "half, by an older promptc").unwrap();
    std::fs::write(folder.join(".notes"), "someone's own file").unwrap();

    let run = workspace.run(&["check"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    for name in [".promptc-tmp-Ab12Cd", ".tmpXy34Zw"] {
        assert!(
            run.stderr.contains(&format!(
                "stray: examples/prompts/generic/{name} is a temporary file left by an interrupted build"
            )),
            "{}",
            run.stderr
        );
    }
    // Counted apart from a file that is no output.
    std::fs::write(folder.join("gone.md"), "a file promptc did not write").unwrap();
    let run = workspace.run(&["check"]);
    assert!(
        run.stderr.contains(
            "error: the committed outputs differ (1 unexpected, 2 stray temporary); run `promptc build --all`"
        ),
        "{}",
        run.stderr
    );
    std::fs::remove_file(folder.join("gone.md")).unwrap();
    let run = workspace.run(&["build", "--all"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("removed examples/prompts/generic/.promptc-tmp-Ab12Cd"),
        "{}",
        run.stderr
    );
    assert!(!folder.join(".promptc-tmp-Ab12Cd").exists());
    assert!(!folder.join(".tmpXy34Zw").exists());
    assert!(folder.join(".notes").exists());
    assert_eq!(workspace.run(&["check"]).code, 0);
}

// A build in another container sharing the workspace (another pid namespace), or on a system
// whose processes cannot be asked about, names its temporary files after a process this one
// cannot see: they were removed as left behind while that build was about to rename them
// into place, and it failed. Such a file is left alone, and unreported, until it is older than
// any build takes (when it was made, not when the output it may link to was: that an old one
// is taken for left behind is the unit tests' to show, as no test can age a link).
#[test]
fn a_temporary_file_of_a_build_this_one_cannot_see_is_left_alone() {
    let workspace = Fixture::minimal().write();
    assert_eq!(workspace.run(&["build", "--all"]).code, 0);
    let folder = workspace.root().join("examples/prompts/generic");
    // Pid namespace 1 is no process's: the kernel numbers them from 4026531836.
    let elsewhere = folder.join(".promptc-tmp-1.42-Ab12Cd");
    std::fs::write(&elsewhere, "being written by another build").unwrap();
    let run = workspace.run(&["check"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = workspace.run(&["build", "--all"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(elsewhere.exists(), "{}", run.stderr);
    // A file kept aside is a new link to an output hours old: made now all the same.
    std::fs::remove_file(&elsewhere).unwrap();
    let output = folder.join("basic.md");
    let three_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3 * 3600);
    std::fs::File::options()
        .write(true)
        .open(&output)
        .unwrap()
        .set_modified(three_hours_ago)
        .unwrap();
    std::fs::hard_link(&output, &elsewhere).unwrap();
    let run = workspace.run(&["check"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let run = workspace.run(&["build", "--all"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(elsewhere.exists(), "{}", run.stderr);
}

// Item 9: a path that cannot be written stops the build before anything changes.
#[test]
fn the_matrix_is_written_all_or_nothing() {
    let workspace = two_families().write();
    assert_eq!(workspace.run(&["build", "--all"]).code, 0);
    // Change every output, then make one family's folder unusable.
    std::fs::write(
        workspace.root().join("components/intro.md"),
        "Changed {{ cwd }}.\n",
    )
    .unwrap();
    let xs = workspace.root().join("examples/prompts/xs");
    std::fs::remove_dir_all(&xs).unwrap();
    std::fs::write(&xs, "a file where a folder belongs").unwrap();
    let before = snapshot(workspace.root());
    let run = workspace.run(&["build", "--all"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("examples/prompts/xs is a file, where a folder belongs"),
        "{}",
        run.stderr
    );
    assert_eq!(
        snapshot(workspace.root()),
        before,
        "the build changed files"
    );
}

// Item 10: a non-UTF-8 output index, and an output path that is a folder.
#[test]
fn a_damaged_index_or_a_folder_at_an_output_path_is_named() {
    let workspace = Fixture::minimal().write();
    assert_eq!(workspace.run(&["build", "--all"]).code, 0);
    let index = workspace.root().join("examples/prompts/.promptc-outputs");
    let mut bytes = std::fs::read(&index).unwrap();
    bytes.extend_from_slice(b"examples/prompts/\xff\xfe/basic.md\n");
    std::fs::write(&index, bytes).unwrap();
    assert_eq!(workspace.run(&["check"]).code, 0);
    let run = workspace.run(&["build", "--all"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // The foreign line is dropped when the index is written again.
    assert!(std::str::from_utf8(&std::fs::read(&index).unwrap()).is_ok());

    let output = workspace.root().join(OUTPUT);
    std::fs::remove_file(&output).unwrap();
    std::fs::create_dir(&output).unwrap();
    let run = workspace.run(&["check"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "error: {OUTPUT} is a folder, where a file belongs"
        )),
        "{}",
        run.stderr
    );
}

// The rule for data files and templates: links are followed inside the workspace, refused
// (with a located error) when they lead out, never skipped without a word.
#[test]
fn linked_data_files_are_followed_inside_and_reported_outside() {
    let fixture = Fixture::minimal()
        .remove("components/intro.toml")
        .file("shared/intro.toml", common::COMPONENT);
    let workspace = fixture.write();
    let root = workspace.root();
    symlink(
        root.join("shared/intro.toml"),
        root.join("components/intro.toml"),
    )
    .unwrap();
    // A link to the folder itself: walked once, no endless loop.
    symlink(root.join("components"), root.join("components/again")).unwrap();
    let validation = workspace.validate();
    assert_eq!(
        validation.counts(),
        (0, 0),
        "{:?}",
        validation.diagnostics()
    );

    let outside = workspace.tmp().join("tool.toml");
    std::fs::write(&outside, common::TOOL.replace("read_file", "stolen")).unwrap();
    symlink(&outside, root.join("tools/stolen.toml")).unwrap();
    symlink(
        workspace.tmp().join("missing.toml"),
        root.join("tools/dangling.toml"),
    )
    .unwrap();
    let diagnostics = workspace.validate().diagnostics();
    let refused: Vec<_> = diagnostics
        .iter()
        .map(|d| (d.code.as_str(), d.file.as_str(), d.line, d.column))
        .collect();
    assert_eq!(
        refused,
        [
            ("path-refused", "tools/dangling.toml", 1, 1),
            ("path-refused", "tools/stolen.toml", 1, 1)
        ],
        "{diagnostics:?}"
    );
    assert!(diagnostics[1].message.contains("outside the workspace"));
    assert!(
        diagnostics[0]
            .message
            .contains("a symbolic link to nothing")
    );
}

#[test]
fn templates_manifests_and_fifos_are_read_only_inside_and_regular() {
    let workspace = Fixture::minimal().write();
    let root = workspace.root();
    let secret = workspace.tmp().join("secret.md");
    std::fs::write(&secret, "SECRET-TEXT\n").unwrap();
    std::fs::remove_file(root.join("components/intro.md")).unwrap();
    symlink(&secret, root.join("components/intro.md")).unwrap();
    common::mkfifo(&root.join("tools/pipe.toml"));
    let validation = workspace.validate();
    let diagnostics = validation.diagnostics();
    let found: Vec<_> = diagnostics
        .iter()
        .map(|d| (d.code.as_str(), d.file.as_str()))
        .collect();
    assert!(
        found.contains(&("path-refused", "components/intro.md")),
        "{diagnostics:?}"
    );
    assert!(
        found.contains(&("path-refused", "tools/pipe.toml")),
        "{diagnostics:?}"
    );
    assert!(!format!("{diagnostics:?}").contains("SECRET-TEXT"));

    // The manifest itself.
    let manifest = workspace.tmp().join("manifest.toml");
    std::fs::write(&manifest, common::MANIFEST).unwrap();
    std::fs::remove_file(root.join("promptc.toml")).unwrap();
    symlink(&manifest, root.join("promptc.toml")).unwrap();
    let diagnostics = workspace.validate().diagnostics();
    assert!(
        diagnostics
            .iter()
            .any(|d| d.code == "path-refused" && d.file == "promptc.toml"),
        "{diagnostics:?}"
    );
}

#[test]
fn oversized_data_files_and_templates_are_refused_with_their_limit() {
    let big = format!("{}# {}\n", common::TOOL, "x".repeat(5 * 1024 * 1024));
    let fixture = Fixture::minimal().file("tools/read_file.toml", &big);
    let validation = fixture.validate();
    let single = validation.single();
    assert_eq!(
        (single.code.as_str(), single.file.as_str(), single.line),
        ("path-refused", "tools/read_file.toml", 1)
    );
    assert!(
        single.message.contains("larger than the limit of 4 MiB"),
        "{}",
        single.message
    );
    assert_eq!(
        validation.help(0),
        Some("split the file, or raise `limits.file_bytes` in promptc.toml")
    );
    // The limit is the manifest's to raise.
    let raised = fixture
        .clone()
        .file(
            "promptc.toml",
            format!("{}[limits]\nfile_bytes = 8388608\n", common::MANIFEST),
        )
        .validate();
    assert_eq!(raised.counts(), (0, 0), "{:?}", raised.diagnostics());

    // Templates have their own limit, and all files together another.
    let template = "x".repeat(9 * 1024 * 1024);
    let validation = Fixture::minimal()
        .file("components/intro.md", template)
        .validate();
    let refused = validation.single();
    assert_eq!(refused.file, "components/intro.md");
    assert!(
        refused.message.contains("larger than the limit of 8 MiB"),
        "{}",
        refused.message
    );
    let validation = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}[limits]\nworkspace_bytes = 400\n", common::MANIFEST),
        )
        .validate();
    let refused = validation.diagnostics();
    assert!(
        refused.iter().any(|d| d.code == "path-refused"
            && d.message.contains("past their total limit of 400 bytes")),
        "{refused:?}"
    );
}

#[test]
fn schema_check_stays_inside_the_workspace() {
    let fixture = Fixture::minimal();
    let workspace = fixture.write();
    let elsewhere = workspace.tmp().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    symlink(&elsewhere, workspace.root().join("schema")).unwrap();
    for args in [&["schema"][..], &["schema", "--check"][..]] {
        let run = workspace.run(args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr.contains("schema is a symbolic link to"),
            "{}",
            run.stderr
        );
    }
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}

// Item 13's last point: `init` refuses to replace anything, dangling links included.
#[test]
fn init_does_not_replace_a_dangling_link() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("new");
    std::fs::create_dir_all(&target).unwrap();
    let victim = dir.path().join("victim.toml");
    symlink(&victim, target.join("promptc.toml")).unwrap();
    let output = common::promptc()
        .args(["init"])
        .arg(&target)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("refusing to overwrite 1 existing path"),
        "{stderr}"
    );
    assert!(!victim.exists());
    assert!(target.join("promptc.toml").symlink_metadata().is_ok());
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 1);
}

/// Runs a shell script in `dir`, with promptc's path in `$P`; returns its output.
fn script(dir: &Path, text: &str) -> std::process::Output {
    common::isolated_git(&mut Command::new("sh"))
        .arg("-ec")
        .arg(text)
        .current_dir(dir)
        .env("P", assert_cmd::cargo::cargo_bin("promptc"))
        .env("PROMPTC_NO_CACHE", "1")
        .env("GIT_AUTHOR_NAME", "T")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "T")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .output()
        .unwrap()
}

// A pull request can commit files that make the workspace folder look like a bare repository
// with its own config (a smudge filter that runs a command). git must not be steered by it.
#[test]
fn diff_does_not_let_the_workspace_pose_as_a_git_repository() {
    let dir = tempfile::tempdir().unwrap();
    let output = script(
        dir.path(),
        r#"
        git init -q repo && cd repo
        "$P" init sub >/dev/null 2>&1 && git add -A && git commit -qm base
        cd sub && mkdir -p objects/info refs/heads && echo 'ref: refs/heads/main' > HEAD
        echo "$(cd ../.git/objects && pwd)" > objects/info/alternates
        git -C .. rev-parse HEAD > refs/heads/main
        git config -f config core.repositoryformatversion 0
        git config -f config core.bare false
        git config -f config core.worktree .
        git config -f config filter.x.smudge "sh -c 'echo ran > ../../PWNED; cat'"
        echo '* filter=x' > .gitattributes
        cd .. && git add -A && git commit -qm pr && cd sub
        "$P" diff --base "$(git -C .. rev-parse HEAD~1)" --stat || echo "exit $?"
        "#,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        !dir.path().join("PWNED").exists(),
        "the filter ran:\n{stderr}"
    );
    assert!(stdout.contains("exit 1"), "{stdout}\n{stderr}");
    assert!(stdout.contains("cannot use bare repository"), "{stdout}");
}

// A repository whose `core.hooksPath` is a folder of its working tree (husky's `.husky`)
// runs hooks that a pull request commits: writing the copy's index ran its
// `post-index-change`. And a filter that the machine's configuration names, assigned by the
// repository's `info/attributes`, ran its command as git wrote the copy's files. Neither runs,
// and the copy holds the files as committed.
#[test]
fn diff_runs_no_hook_and_no_filter() {
    let dir = tempfile::tempdir().unwrap();
    let output = script(
        dir.path(),
        r#"
        git init -q repo && cd repo
        "$P" init . >/dev/null 2>&1 && git add -A && git commit -qm base
        git config core.hooksPath .husky
        mkdir .husky
        for hook in post-index-change post-checkout pre-commit reference-transaction; do
          printf '#!/bin/sh\necho %s >> "%s/RAN"\n' "$hook" "$(cd .. && pwd)" > .husky/$hook
          chmod +x .husky/$hook
        done
        cp .husky/* .git/hooks/
        git config filter.pwn.smudge "sh -c 'echo smudge >> $(cd .. && pwd)/RAN; tr a-z A-Z'"
        git config filter.pwn.required true
        echo '*.md filter=pwn' > .git/info/attributes
        echo '*.md ident' >> .git/info/attributes
        rm -f ../RAN
        echo 'A line added by the pull request.' >> components/objective.md
        "$P" build --all >/dev/null
        "$P" diff --base HEAD --stat || echo "exit $?"
        # As git runs a hook of a linked worktree: the variables lead to the repository's
        # configuration and attributes.
        GIT_COMMON_DIR="$(pwd)/.git" GIT_DIR="$(pwd)/.git" "$P" diff --base HEAD --stat > /dev/null || echo "exit $?"
        "#,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let ran = std::fs::read_to_string(dir.path().join("RAN")).unwrap_or_default();
    assert_eq!(ran, "", "{stdout}\n{stderr}");
    // The base compiled from the files as committed: only the added line differs, where
    // the filter's capitals would have changed every line of every prompt.
    assert!(!stdout.contains("exit"), "{stdout}\n{stderr}");
    assert!(stdout.contains("components/objective.md"), "{stdout}");
    assert!(!stdout.contains("promptc.toml"), "{stdout}");
}

// The copy is written as a checkout of the repository would be: with `core.autocrlf` (on by
// default in Git for Windows) text files have CRLF endings, as in the working tree, and an
// unchanged workspace compares equal (written without the configuration, every prompt
// differed). A repository whose path holds a line break is copied too.
#[test]
fn diff_writes_the_copy_as_the_repository_checks_files_out() {
    let dir = tempfile::tempdir().unwrap();
    let output = script(
        dir.path(),
        r#"
        git init -q base && cd base
        "$P" init ws >/dev/null 2>&1 && git add -A && git commit -qm base && cd ..
        printf '[core]\n\tautocrlf = true\n' > crlf.gitconfig
        export GIT_CONFIG_GLOBAL="$(pwd)/crlf.gitconfig"
        git clone -q base crlf && cd crlf/ws
        grep -c "$(printf '\r')" examples/prompts/generic/basic.md > /dev/null
        "$P" diff --base HEAD --exit-code --stat || echo "exit $?"
        cd ../..
        git clone -q base "$(printf 'line\nbreak')" && cd "$(printf 'line\nbreak')/ws"
        "$P" diff --base HEAD --exit-code --stat || echo "exit $?"
        "#,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(!stdout.contains("exit"), "{stdout}\n{stderr}");
    assert_eq!(
        stdout.matches("no compiled prompt differs").count(),
        2,
        "{stdout}\n{stderr}"
    );
}

// A revision's `.gitattributes` decides how git writes its files: `ident` turns each 4-byte
// `$Id$` into 47 bytes (a revision under its size limit becomes many times it on disk), and
// `filter` runs a command. The copy holds the files as committed, whatever the attributes of
// the revision or of the working tree say.
#[test]
fn diff_copies_a_revision_as_committed_whatever_its_attributes_say() {
    let dir = tempfile::tempdir().unwrap();
    let output = script(
        dir.path(),
        r#"
        git init -q repo && cd repo
        "$P" init . >/dev/null 2>&1
        echo 'Revision $Id$ here.' >> components/agent_role.md
        echo '*.md ident' > .gitattributes
        mkdir -p deeper && echo '*.md ident' > deeper/.gitattributes
        git add -A && git commit -qm base
        "$P" diff --base HEAD --stat
        git rm -q --cached .gitattributes deeper/.gitattributes && git commit -qm 'no attributes'
        "$P" diff --base HEAD --stat
        rm .gitattributes deeper/.gitattributes
        odd="$(printf 'components/odd\tdir')" && mkdir "$odd"
        mv components/agent_role.toml components/agent_role.md "$odd"/
        echo '*.md ident' > "$odd/.gitattributes"
        git add -A && git commit -qm 'attributes in a folder with a tab in its name'
        "$P" diff --base HEAD --stat
        "#,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    // Committed, then only in the working tree, then in a folder whose name holds a tab (the
    // path is all after the first tab of git's listing): none expands `$Id$` in the copy.
    assert_eq!(
        stdout
            .matches("no compiled prompt differs between HEAD and working tree")
            .count(),
        3,
        "{stdout}\n{stderr}"
    );
}

// One subtree listed twice per level: 2^27 files described by a few kilobytes of objects.
// Beside the workspace's folders it is never listed; in a folder the workspace reads, it is
// measured without being listed whole, and refused.
#[test]
fn diff_measures_a_revision_without_listing_it_whole() {
    let dir = tempfile::tempdir().unwrap();
    let output = script(
        dir.path(),
        r#"
        git init -q repo && cd repo
        "$P" init . >/dev/null 2>&1 && git add -A && git commit -qm base
        blob=$(echo x | git hash-object -w --stdin)
        t=$(printf '100644 blob %s\ta\n100644 blob %s\tb\n' $blob $blob | git mktree)
        for i in $(seq 1 26); do t=$(printf '040000 tree %s\ta\n040000 tree %s\tb\n' $t $t | git mktree); done
        top=$( (git ls-tree HEAD; printf '040000 tree %s\tbomb\n' $t) | git mktree)
        c=$(git commit-tree "$top" -p HEAD -m 'bomb beside')
        "$P" diff --base "$c" --stat || echo "exit $?"
        components=$( (git ls-tree HEAD:components; printf '040000 tree %s\tbomb\n' $t) | git mktree)
        top=$(git ls-tree HEAD | sed "s/[0-9a-f]*\tcomponents\$/$components\tcomponents/" | git mktree)
        c=$(git commit-tree "$top" -p HEAD -m 'bomb inside')
        "$P" diff --base "$c" --stat || echo "exit $?"
        "#,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let (beside, inside) = stdout.split_once("exit").expect("the second diff fails");
    assert!(
        beside.contains("no compiled prompt differs"),
        "{stdout}\n{stderr}"
    );
    assert!(inside.starts_with(" 1"), "{stdout}\n{stderr}");
    assert!(
        stdout
            .contains("are more than 100000 files or 1073741824 bytes: promptc does not copy them"),
        "{stdout}"
    );
}

// A revision's copy holds what loading its workspace reads, wherever it lies in the folder:
// a template a spec names outside the manifest's folders, a context's rules folder, a folder
// a link leads to, a manifest that is a link. Each of their changes is seen: a file the copy
// lacked would have made the base fail to load.
#[test]
fn diff_writes_of_a_revision_every_file_its_workspace_reads() {
    let workspace = Fixture::minimal()
        .remove("components/intro.md")
        .file(
            "components/intro.toml",
            format!(
                "{}template_file = \"../shared/intro.md\"\n",
                common::COMPONENT
            ),
        )
        .file(
            "shared/intro.md",
            "Shared intro, first.\n{% for rule in rules %}{{ rule.text }}{% endfor %}\n",
        )
        .file(
            "examples/contexts/basic.toml",
            "date = \"2026-11-01\"\nrules_from = [\"project\"]\n",
        )
        .file("project/.clinerules/style.md", "Tabs, first.\n")
        .file(
            "more/write_file.toml",
            "id = \"write_file\"\ndescription = \"Write a file, first.\"\n",
        )
        .remove("promptc.toml")
        .file("config/promptc.toml", common::MANIFEST)
        .file(
            "variants/generic.toml",
            common::VARIANT.replace("[\"read_file\"]", "[\"read_file\", \"write_file\"]"),
        )
        .write();
    let root = workspace.root();
    symlink("../more", root.join("tools/more")).unwrap();
    symlink("config/promptc.toml", root.join("promptc.toml")).unwrap();
    let output = script(
        root,
        r#"
        git init -q . && git add -A && git commit -qm base
        "$P" diff --base HEAD --stat
        sed -i 's/first/second/' shared/intro.md project/.clinerules/style.md more/write_file.toml
        "$P" diff --base HEAD --stat
        "#,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let (same, changed) = stdout
        .split_once("no compiled prompt differs between HEAD and working tree\n")
        .expect("the unchanged base compiles alike");
    assert!(same.is_empty(), "{stdout}");
    for file in [
        "shared/intro.md",
        "project/.clinerules/style.md",
        "more/write_file.toml",
    ] {
        assert!(
            changed.contains(&format!(
                "{file} (modified): examples/prompts/generic/basic.md"
            )),
            "{file}: {stdout}\n{stderr}"
        );
    }
}

// Links must not multiply what a load reads: one file reached by several paths is read once.
#[test]
fn a_file_reached_through_several_links_is_read_once() {
    let workspace = Fixture::minimal().write();
    let contexts = workspace.root().join("examples/contexts");
    for name in ["a", "b", "c"] {
        symlink("basic.toml", contexts.join(format!("{name}.toml"))).unwrap();
    }
    let diagnostics = workspace.validate().diagnostics();
    let found: Vec<_> = diagnostics
        .iter()
        .map(|d| (d.code.as_str(), d.file.as_str(), d.message.as_str()))
        .collect();
    let expected: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|name| {
            (
                "path-refused",
                format!("examples/contexts/{name}.toml"),
                format!(
                    "`examples/contexts/{name}.toml` is a symbolic link to a file already read as examples/contexts/basic.toml: promptc does not read it"
                ),
            )
        })
        .collect();
    let expected: Vec<_> = expected
        .iter()
        .map(|(c, f, m)| (*c, f.as_str(), m.as_str()))
        .collect();
    assert_eq!(found, expected);
}

// The index and the output folders cannot be turned into a way to delete other files, even
// inside the workspace, and `.git` is never a destination.
#[test]
fn nothing_below_the_output_folder_is_reached_through_a_link() {
    let workspace = Fixture::minimal().write();
    let root = workspace.root();
    assert_eq!(workspace.run(&["build", "--all"]).code, 0);
    symlink("../../components", root.join("examples/prompts/zz")).unwrap();
    std::fs::write(root.join("components/.tmpAbc123"), "mine").unwrap();
    let index = root.join("examples/prompts/.promptc-outputs");
    let mut text = std::fs::read_to_string(&index).unwrap();
    text.push_str("examples/prompts/zz/intro.md\n");
    std::fs::write(&index, text).unwrap();
    for command in [&["build", "--all"][..], &["check"][..]] {
        let run = workspace.run(command);
        assert_eq!(run.code, 1, "{command:?}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("examples/prompts/zz is a symbolic link among promptc's outputs"),
            "{}",
            run.stderr
        );
    }
    assert!(root.join("components/intro.md").exists());
    assert!(root.join("components/.tmpAbc123").exists());
}

#[test]
fn the_git_folder_is_neither_read_nor_written() {
    let fixture = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}[build]\nout = \".git/prompts\"\n", common::MANIFEST),
        )
        .file(
            "components/intro.toml",
            "id = \"intro\"\ntemplate_file = \"../.git/config\"\n",
        )
        .file(
            ".git/config",
            "[http]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n",
        );
    let workspace = fixture.write();
    let diagnostics = workspace.validate().diagnostics();
    assert!(
        diagnostics
            .iter()
            .any(|d| d.code == "path-refused"
                && d.message.contains(".git/config` is in a .git folder")),
        "{diagnostics:?}"
    );
    assert!(!format!("{diagnostics:?}").contains("c2VjcmV0"));
    // With a sound template, the build still refuses `.git` as its output folder, at the
    // setting.
    std::fs::write(
        workspace.root().join("components/intro.toml"),
        common::COMPONENT,
    )
    .unwrap();
    let run = workspace.run(&["build", "--all"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "error[path-in-git-folder]: `build.out` names `.git/prompts`, in the repository's .git folder\n --> promptc.toml:4:7"
        ),
        "{}",
        run.stderr
    );
    assert!(!workspace.root().join(".git/prompts").exists());
}

#[test]
fn schema_files_are_written_all_or_nothing_and_never_over_links() {
    let workspace = Fixture::minimal().write();
    let schema = workspace.root().join("schema");
    std::fs::create_dir_all(schema.join("tool.schema.json")).unwrap();
    let run = workspace.run(&["schema"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("schema/tool.schema.json is a folder, where a file belongs"),
        "{}",
        run.stderr
    );
    assert_eq!(
        std::fs::read_dir(&schema).unwrap().count(),
        1,
        "some schemas were written"
    );

    std::fs::remove_dir(schema.join("tool.schema.json")).unwrap();
    let outside = workspace.tmp().join("outside.json");
    std::fs::write(&outside, "theirs").unwrap();
    symlink(&outside, schema.join("tool.schema.json")).unwrap();
    let run = workspace.run(&["schema"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("schema/tool.schema.json is a symbolic link to"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "theirs");
}

#[test]
fn odd_names_and_odd_files_get_their_own_reason() {
    let workspace = Fixture::minimal().write();
    let root = workspace.root();
    assert_eq!(workspace.run(&["build", "--all"]).code, 0);
    // A family folder whose name is not UTF-8 is listed, not re-resolved from a lossy name.
    let odd = std::ffi::OsStr::from_bytes(b"examples/prompts/\xff");
    std::fs::create_dir(root.join(odd)).unwrap();
    std::fs::write(root.join(odd).join("basic.md"), "x").unwrap();
    let run = workspace.run(&["check"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("unexpected: examples/prompts/\u{fffd}/basic.md"),
        "{}",
        run.stderr
    );
    // A FIFO where a sibling template belongs is named as such, not as missing.
    std::fs::remove_file(root.join("components/intro.md")).unwrap();
    common::mkfifo(&root.join("components/intro.md"));
    let diagnostics = workspace.validate().diagnostics();
    assert!(
        diagnostics.iter().any(|d| d.code == "path-refused"
            && d.message
                == "`components/intro.md` is a named pipe (FIFO), not a regular file: promptc does not read it"),
        "{diagnostics:?}"
    );
    // A loop of links is a link that cannot be followed, with its path.
    std::fs::remove_file(root.join("components/intro.md")).unwrap();
    symlink("loop.md", root.join("components/intro.md")).unwrap();
    symlink("intro.md", root.join("components/loop.md")).unwrap();
    let diagnostics = workspace.validate().diagnostics();
    assert!(
        diagnostics.iter().any(|d| d.code == "path-refused"
            && d.message
                .starts_with("`components/intro.md` is a symbolic link that cannot be followed")),
        "{diagnostics:?}"
    );
}

#[test]
fn the_diff_of_a_huge_stale_output_is_cut() {
    let workspace = Fixture::minimal().write();
    assert_eq!(workspace.run(&["build", "--all"]).code, 0);
    let lines: String = (0..200_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(workspace.root().join(OUTPUT), lines).unwrap();
    let run = workspace.run(&["check"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.len() < 300 * 1024,
        "{} bytes of diff",
        run.stdout.len()
    );
    assert!(
        run.stdout
            .contains("more lines of this diff are not shown (the diff is over 256 KiB)"),
        "{}",
        &run.stdout[run.stdout.len().saturating_sub(500)..]
    );
}

// A failure shared by every entry is reported with the first one; the others say so.
#[test]
fn diff_reports_a_shared_error_once() {
    let fixture = Fixture::minimal().file("examples/contexts/second.toml", common::CONTEXT);
    let workspace = repository(&fixture);
    std::fs::write(
        workspace.root().join("components/intro.md"),
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n",
    )
    .unwrap();
    let run = workspace.run(&["--color", "never", "diff", "--base", "HEAD"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    let all = format!("{}{}", run.stdout, run.stderr);
    assert_eq!(all.matches("error[out-of-fuel]").count(), 1, "{all}");
    assert!(
        all.contains("generic × second does not compile: (errors above)"),
        "{all}"
    );
}

// Files promptc writes are read back bounded; a too-large one is rewritten, or named with the
// fix that fits a generated file.
#[test]
fn oversized_generated_files_are_rewritten_or_named() {
    let workspace = Fixture::minimal().write();
    assert_eq!(workspace.run(&["build", "--all"]).code, 0);
    let output = workspace.root().join(OUTPUT);
    let fresh = std::fs::read(&output).unwrap();
    std::fs::write(&output, vec![b'x'; 1 << 20]).unwrap();
    let run = workspace.run(&["build", "--all"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(std::fs::read(&output).unwrap(), fresh);

    let index = workspace.root().join("examples/prompts/.promptc-outputs");
    std::fs::write(&index, vec![b'\n'; 5 << 20]).unwrap();
    let run = workspace.run(&["check"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "error: examples/prompts/.promptc-outputs is larger than the limit of 4 MiB\n  = help: delete it: `promptc build --all` writes it again"
        ),
        "{}",
        run.stderr
    );
}

// The output folder was compared with the source folders as written: with a link `here` → `.`,
// `out = "here/partials"` is the partials folder itself, and `build --all` wrote its outputs
// and index there. The folders are compared as they really lie too.
#[test]
fn an_output_folder_reached_through_a_link_may_not_be_a_source_folder() {
    let workspace = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[build]\nout = \"here/partials\"\n", common::MANIFEST),
        )
        .write();
    symlink(".", workspace.root().join("here")).unwrap();
    let errors: Vec<(String, String)> = workspace
        .validate()
        .diagnostics()
        .into_iter()
        .filter(|d| d.severity == "error")
        .map(|d| (d.code, d.file))
        .collect();
    assert_eq!(
        errors,
        [(
            "output-overlaps-sources".to_string(),
            "promptc.toml".to_string()
        )]
    );
    let run = workspace.run(&["build", "--all"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(!workspace.root().join("partials/.promptc-outputs").exists());
}

/// A template path that is refused (here, into `.git`) is the naming field's problem: the
/// diagnostic points at that field's value, not at the refused file, which the user cannot
/// open and need not change.
#[test]
fn a_refused_template_file_is_reported_at_the_field_that_names_it() {
    let variant = "id = \"generic\"\ntemplate_file = \"../.git/config\"\ncomponents = [\"intro\"]\ntools = [\"read_file\"]\ntool_format_file = \"../.git/config\"\n";
    let component = "id = \"intro\"\ndescription = \"d\"\n\n[families.generic]\ntemplate_file = \"../.git/HEAD\"\n";
    let workspace = Fixture::minimal()
        .file("variants/generic.toml", variant)
        .file("components/intro.toml", component)
        .file(".git/config", "[core]\n")
        .file(".git/HEAD", "ref: refs/heads/main\n")
        .write();
    // A link to nothing in a walked folder is reported where it lies, and again at the field
    // that names it.
    symlink(
        workspace.tmp().join("missing.md"),
        workspace.root().join("variants/gone.md"),
    )
    .unwrap();
    let xs = "id = \"xs\"\nextends = \"generic\"\n[overrides.components.intro]\ntemplate_file = \"gone.md\"\n";
    std::fs::write(workspace.root().join("variants/xs.toml"), xs).unwrap();
    let mut found: Vec<_> = workspace
        .validate()
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == "path-refused")
        .map(|d| (d.file, d.line, d.column, d.message))
        .collect();
    found.sort();
    let git = "`.git/config` is in a .git folder: promptc does not read it";
    let gone = "`variants/gone.md` is a symbolic link to nothing: promptc does not read it";
    assert_eq!(
        found,
        [
            (
                "components/intro.toml".into(),
                5,
                17,
                "`.git/HEAD` is in a .git folder: promptc does not read it".into()
            ),
            ("variants/generic.toml".into(), 2, 17, git.into()),
            ("variants/generic.toml".into(), 5, 20, git.into()),
            ("variants/gone.md".into(), 1, 1, gone.into()),
            ("variants/xs.toml".into(), 4, 17, gone.into()),
        ],
        "{found:#?}"
    );
    assert_eq!(common::position_of(variant, "\"../.git/config\""), (2, 17));
    assert_eq!(common::position_of(xs, "\"gone.md\""), (4, 17));
}

// A workspace folder (here the tools and, named in the manifest, the partials) that is a link
// to nothing was read as an empty folder: every tool "unknown", and nothing said why. It is
// refused where it lies, as a file that is a link to nothing is; a folder that does not exist
// at all is still empty.
#[test]
fn a_folder_that_is_a_link_to_nothing_is_refused_where_it_lies() {
    let workspace = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[paths]\npartials = \"shared\"\n", common::MANIFEST),
        )
        .write();
    let root = workspace.root();
    std::fs::remove_dir_all(root.join("tools")).unwrap();
    symlink(workspace.tmp().join("gone"), root.join("tools")).unwrap();
    symlink(root.join("nowhere"), root.join("shared")).unwrap();
    let refused: Vec<_> = workspace
        .validate()
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == "path-refused")
        .map(|d| (d.file, d.message))
        .collect();
    assert_eq!(
        refused,
        [
            (
                "tools".to_string(),
                "`tools` is a symbolic link to nothing: promptc does not read it".to_string()
            ),
            (
                "shared".to_string(),
                "`shared` is a symbolic link to nothing: promptc does not read it".to_string()
            ),
        ],
        "{refused:#?}"
    );
    // Without the links, the partials folder is missing and empty, which is no error.
    std::fs::remove_file(root.join("shared")).unwrap();
    assert!(
        workspace
            .validate()
            .diagnostics()
            .iter()
            .all(|d| d.code != "path-refused" || d.file == "tools")
    );
}

// A `promptc.toml` that is a folder, a link to nothing or a pipe is the workspace's manifest,
// refused where it lies: promptc walked on past it to the folder above, loaded that outside
// workspace's manifest if it had one, and else said there was no promptc.toml at all. Found
// from a folder inside, and named with `-C`.
#[test]
fn a_manifest_that_is_not_a_file_is_refused_not_passed_for_the_one_above() {
    let outer = Fixture::minimal().write();
    let inner = outer.root().join("inner");
    for (kind, message) in [
        (
            "folder",
            "`promptc.toml` is a folder, where a file belongs: promptc does not read it",
        ),
        (
            "link",
            "`promptc.toml` is a symbolic link to nothing: promptc does not read it",
        ),
        (
            "pipe",
            "`promptc.toml` is a named pipe (FIFO), not a regular file: promptc does not read it",
        ),
    ] {
        let _ = std::fs::remove_dir_all(&inner);
        std::fs::create_dir_all(inner.join("components")).unwrap();
        let manifest = inner.join("promptc.toml");
        match kind {
            "folder" => std::fs::create_dir(&manifest).unwrap(),
            "link" => symlink(inner.join("gone.toml"), &manifest).unwrap(),
            _ => common::mkfifo(&manifest),
        }
        let from_inside = common::promptc_process()
            .current_dir(inner.join("components"))
            .args(["validate", "--format", "json"])
            .output()
            .unwrap();
        let named = common::promptc_process()
            .arg("-C")
            .arg(&inner)
            .args(["validate", "--format", "json"])
            .output()
            .unwrap();
        for output in [from_inside, named] {
            assert_eq!(output.status.code(), Some(1), "{kind}: {output:?}");
            let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
            let diagnostics = report["diagnostics"].as_array().unwrap();
            assert_eq!(diagnostics.len(), 1, "{kind}: {report:#}");
            assert_eq!(diagnostics[0]["code"], "path-refused", "{kind}: {report:#}");
            assert_eq!(diagnostics[0]["file"], "promptc.toml", "{kind}: {report:#}");
            assert_eq!(diagnostics[0]["message"], message, "{kind}: {report:#}");
        }
    }
}

// A folder setting inside the repository's `.git` folder was found empty when read (every
// partial "missing", no rules) or refused only when a build came to write there, and nothing
// named the setting. It is an error at the setting, written or reached through a link.
#[test]
fn a_folder_setting_in_the_git_folder_is_an_error_at_the_setting() {
    let workspace = Fixture::minimal()
        .file(
            "promptc.toml",
            format!(
                "{}\n[paths]\npartials = \"through/p\"\n\n[build]\nout = \".git/out\"\n",
                common::MANIFEST
            ),
        )
        .file(
            "examples/contexts/basic.toml",
            format!("{}rules_from = [\"rules\", \".GIT\"]\n", common::CONTEXT),
        )
        .write();
    let root = workspace.root();
    std::fs::create_dir_all(root.join(".git/p")).unwrap();
    std::fs::create_dir_all(root.join("rules")).unwrap();
    symlink(".git", root.join("through")).unwrap();
    let found: Vec<(String, u64, u64, String)> = workspace
        .validate()
        .diagnostics()
        .into_iter()
        .filter(|d| d.code == "path-in-git-folder")
        .map(|d| (d.file, d.line, d.column, d.message))
        .collect();
    let manifest = std::fs::read_to_string(root.join("promptc.toml")).unwrap();
    let context = std::fs::read_to_string(root.join("examples/contexts/basic.toml")).unwrap();
    let at = |file: &str, text: &str, needle: &str, message: &str| {
        let (line, column) = common::position_of(text, needle);
        (file.to_string(), line, column, message.to_string())
    };
    assert_eq!(
        found,
        [
            at(
                "promptc.toml",
                &manifest,
                "\"through/p\"",
                "`paths.partials` names `through/p`, in the repository's .git folder"
            ),
            at(
                "promptc.toml",
                &manifest,
                "\".git/out\"",
                "`build.out` names `.git/out`, in the repository's .git folder"
            ),
            at(
                "examples/contexts/basic.toml",
                &context,
                "\".GIT\"",
                "`rules_from` names `.GIT`, in the repository's .git folder"
            ),
        ]
    );
}

#[test]
fn folders_nested_too_deep_or_too_long_are_named_not_a_failed_load() {
    let refused = |workspace: &Workspace| -> Vec<String> {
        let validation = workspace.validate();
        assert_eq!(validation.code, 1, "{}", validation.stderr);
        let diagnostics = validation.diagnostics();
        // Nothing else is wrong with the workspace.
        assert!(
            diagnostics.iter().all(|d| d.code == "path-refused"),
            "{diagnostics:#?}"
        );
        diagnostics.into_iter().map(|d| d.message).collect()
    };

    // Forty levels of folders below the partials folder: the one past the depth read is
    // named once.
    let workspace = Fixture::minimal().write();
    let root = workspace.root();
    let deep = root.join("partials").join(["d"; 40].join("/"));
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("x.md"), "x").unwrap();
    assert_eq!(
        refused(&workspace),
        [format!(
            "`partials/{}` is a folder nested more than 32 levels deep: promptc does not read it",
            ["d"; 33].join("/")
        )]
    );

    // Twenty levels of 250-character names: a path longer than the system takes, built by
    // moving each level into the next so that no call sees a long path, as a checkout can
    // make it. It was an I/O error that ended the load, naming no file.
    let workspace = Fixture::minimal().write();
    let root = workspace.root();
    let name = |level: usize| format!("{level:02}{}", "n".repeat(248));
    let mut top = name(0);
    std::fs::create_dir(workspace.tmp().join(&top)).unwrap();
    for level in 1..20 {
        let wrapper = name(level);
        std::fs::create_dir(workspace.tmp().join(&wrapper)).unwrap();
        std::fs::rename(
            workspace.tmp().join(&top),
            workspace.tmp().join(&wrapper).join(&top),
        )
        .unwrap();
        top = wrapper;
    }
    std::fs::rename(
        workspace.tmp().join(&top),
        root.join("components").join(&top),
    )
    .unwrap();
    let messages = refused(&workspace);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(
        // The path is shortened in the message, as every long quote is.
        messages[0].starts_with("`components/19nnn")
            && messages[0].contains("is a folder that cannot be read (")
            && messages[0].contains("too long"),
        "{messages:#?}"
    );

    // Just within the depth, a variant is read; one level deeper, its folder is named.
    let workspace = Fixture::minimal().write();
    let root = workspace.root();
    let within = root.join("variants").join(["v"; 32].join("/"));
    std::fs::create_dir_all(&within).unwrap();
    // The variant's template is named relative to it, and moves with it.
    let move_variant = |from: &Path, to: &Path| {
        for file in ["generic.toml", "generic.md"] {
            std::fs::rename(from.join(file), to.join(file)).unwrap();
        }
    };
    move_variant(&root.join("variants"), &within);
    assert_eq!(workspace.validate().code, 0);
    std::fs::create_dir(within.join("w")).unwrap();
    move_variant(&within, &within.join("w"));
    let messages = refused_or_missing(&workspace);
    assert!(
        messages.contains(&format!(
            "`variants/{}/w` is a folder nested more than 32 levels deep: promptc does not read it",
            ["v"; 32].join("/")
        )),
        "{messages:#?}"
    );

    // Links to folders count towards the depth: a chain of forty links, each in the folder
    // the one before leads to, ends where forty levels of folders do.
    let workspace = Fixture::minimal().write();
    let root = workspace.root();
    for level in 0..=40 {
        let folder = root.join(format!("chain/c{level}"));
        std::fs::create_dir_all(&folder).unwrap();
        if level < 40 {
            symlink(format!("../c{}", level + 1), folder.join("next")).unwrap();
        }
    }
    // Not a component: were it read, it would be reported as one.
    std::fs::write(root.join("chain/c40/unused.toml"), "id = 1\n").unwrap();
    symlink("../chain/c0", root.join("components/start")).unwrap();
    let messages = refused(&workspace);
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(
        messages[0].starts_with("`components/start/next/next/")
            && messages[0]
                .ends_with("is a folder nested more than 32 levels deep: promptc does not read it"),
        "{messages:#?}"
    );
}

/// The messages of a validation that failed, whatever their codes.
fn refused_or_missing(workspace: &Workspace) -> Vec<String> {
    let validation = workspace.validate();
    assert_eq!(validation.code, 1, "{}", validation.stderr);
    validation
        .diagnostics()
        .into_iter()
        .map(|d| d.message)
        .collect()
}

// Links to the folders of a chain made each linked folder walked again, whole: 31 links into a
// chain of 5,000 files read it 31 times (2 GB, 64,000 errors). Every real folder is walked
// once, and a file below a linked folder is the one reached through a link: the file itself
// keeps its own path.
#[test]
fn a_folder_reached_through_links_is_walked_once_and_its_files_keep_their_own_path() {
    let workspace = Fixture::minimal().write();
    let root = workspace.root();
    let mut chain = root.join("components");
    for level in 1..=5 {
        chain.push(format!("c{level}"));
        std::fs::create_dir(&chain).unwrap();
        symlink(&chain, root.join(format!("components/link{level}"))).unwrap();
    }
    for file in 0..20 {
        std::fs::write(chain.join(format!("f{file}.toml")), "").unwrap();
    }
    let diagnostics = workspace.validate().diagnostics();
    assert_eq!(diagnostics.len(), 20, "{diagnostics:#?}");
    assert!(
        diagnostics
            .iter()
            .all(|d| d.code == "empty-file" && d.file.starts_with("components/c1/c2/c3/c4/c5/f")),
        "{diagnostics:#?}"
    );

    // A variant in a folder that a link also reaches is read at its own path, without a word.
    let workspace = Fixture::minimal().write();
    let root = workspace.root();
    std::fs::create_dir(root.join("variants/sub")).unwrap();
    for file in ["generic.toml", "generic.md"] {
        std::fs::rename(
            root.join("variants").join(file),
            root.join("variants/sub").join(file),
        )
        .unwrap();
    }
    symlink("sub", root.join("variants/a_link")).unwrap();
    assert_eq!(workspace.validate().diagnostics(), []);
}

// A folder reached only through links is the walk's root, which was not marked walked: a
// chain of folders each holding two links to the next was walked once per path, 2^n times
// (32 levels held `validate`, `check` and `diff --base` until the processor-time limit).
#[test]
fn a_fan_of_links_to_the_same_folders_is_walked_once_per_folder() {
    for folder in ["partials", "components"] {
        let workspace = Fixture::minimal().write();
        let root = workspace.root();
        const LEVELS: usize = 30;
        for level in 0..=LEVELS {
            std::fs::create_dir_all(root.join(format!("fan/d{level}"))).unwrap();
        }
        for level in 0..LEVELS {
            for name in ["a", "b"] {
                let next = format!("../d{}", level + 1);
                symlink(&next, root.join(format!("fan/d{level}/{name}"))).unwrap();
            }
        }
        let file = if folder == "partials" {
            "f.md"
        } else {
            "f.toml"
        };
        std::fs::write(root.join(format!("fan/d{LEVELS}/{file}")), "").unwrap();
        std::fs::create_dir_all(root.join(folder)).unwrap();
        symlink("../fan/d0", root.join(format!("{folder}/fan"))).unwrap();
        let mut command = common::promptc_process();
        command
            .args(["validate", "--format", "json", "-C"])
            .arg(root)
            .stdout(std::process::Stdio::piped());
        let (status, stderr) = common::run_within(
            &mut command,
            std::time::Duration::from_secs(60),
            "validate walked the fan of links path by path",
        );
        assert!(status.code().is_some(), "{stderr}");
        // Found once, by one path: a partial no template includes, or an empty component
        // file; no path refused as a second way to a file already read.
        let diagnostics = workspace.validate().diagnostics();
        let expected = if folder == "partials" {
            "unused-partial"
        } else {
            "empty-file"
        };
        let codes: Vec<&str> = diagnostics.iter().map(|d| d.code.as_str()).collect();
        assert_eq!(codes, [expected], "{diagnostics:#?}");
    }
}

// A folder setting left to its default, whose folder is a link leading out: the diagnostic
// spanned the whole manifest, which does not write the setting, and advised a path relative
// to the file. It points at the manifest's start and names the setting to set instead; one
// the manifest writes is still reported at its value.
#[test]
fn a_default_folder_that_leads_out_names_its_setting() {
    let workspace = Fixture::minimal().write();
    let root = workspace.root();
    let elsewhere = workspace.tmp().join("elsewhere");
    std::fs::rename(root.join("examples/contexts"), &elsewhere).unwrap();
    symlink(&elsewhere, root.join("examples/contexts")).unwrap();
    let validation = workspace.validate();
    let escapes: Vec<_> = validation
        .diagnostics()
        .into_iter()
        .enumerate()
        .filter(|(_, d)| d.code == "path-escapes-workspace")
        .collect();
    let [(index, escape)] = escapes.as_slice() else {
        panic!("{escapes:#?}");
    };
    assert_eq!(
        (escape.file.as_str(), escape.line, escape.column),
        ("promptc.toml", 1, 1)
    );
    assert_eq!(
        escape.message,
        "folder `examples/contexts`, the default `paths.contexts`, leads out of the workspace"
    );
    let item = validation.item(*index);
    assert_eq!(
        (&item["end_line"], &item["end_column"]),
        (&item["line"], &item["column"]),
        "{item:#}"
    );
    assert!(
        validation
            .help(*index)
            .is_some_and(|help| help.contains("set `paths.contexts` in promptc.toml")),
        "{:?}",
        validation.help(*index)
    );

    std::fs::write(
        root.join("promptc.toml"),
        format!(
            "{}[paths]\ncontexts = \"examples/contexts\"\n",
            common::MANIFEST
        ),
    )
    .unwrap();
    let escape = workspace
        .validate()
        .diagnostics()
        .into_iter()
        .find(|d| d.code == "path-escapes-workspace")
        .unwrap();
    // Written inside the workspace, it leaves it through the link, which the words name.
    assert_eq!(
        (escape.line, escape.column, escape.message.as_str()),
        (
            4,
            12,
            "path `examples/contexts` leads out of the workspace through a link"
        )
    );
}

/// Paths refused one by one (links to nothing, FIFOs, second links) are named up to a bound,
/// the rest counted in one diagnostic at their folder: a checkout of 200,000 links to nothing
/// made as many errors (18 seconds, 200 MB, 77 MB of JSON). The same in a rules folder.
#[test]
fn many_refused_paths_are_named_up_to_a_bound_and_counted() {
    let workspace = Fixture::minimal()
        .file(
            "examples/contexts/basic.toml",
            "date = \"2026-11-01\"\nrules_from = [\"project\"]\n",
        )
        .file("project/.clinerules/style.md", "Be brief.\n")
        .write();
    let root = workspace.root();
    std::fs::create_dir_all(root.join("partials")).unwrap();
    for index in 0..250 {
        symlink("nowhere", root.join(format!("partials/l{index:03}.md"))).unwrap();
        symlink(
            "nowhere",
            root.join(format!("project/.clinerules/l{index:03}.md")),
        )
        .unwrap();
    }
    let run = workspace.run(&["validate"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|line| line.starts_with("error"))
        .collect();
    assert_eq!(errors.len(), 102, "{errors:?}");
    // The first hundred in name order are named; the rest counted at the folder.
    assert!(
        run.stderr
            .contains("`partials/l099.md` is a symbolic link to nothing")
    );
    assert!(!run.stderr.contains("partials/l100.md"));
    assert!(errors.contains(
        &"error[path-refused]: `partials` holds 150 more refused paths besides the first 100 in \
          name order (refused as those are, not named one by one): promptc does not read it"
    ));
    let warnings = run
        .stderr
        .lines()
        .filter(|line| line.starts_with("warning[rule-unreadable]"))
        .count();
    assert_eq!(warnings, 100, "{}", run.stderr);
    assert!(!run.stderr.contains(".clinerules/l100.md"));
    assert!(run.stderr.contains(
        "warning[more-rules-unreadable]: rules folder `project` holds 150 more files or folders \
         that cannot be read, besides the 100 named; they are skipped"
    ));
    assert!(
        run.stderr.contains("error: 101 errors, 101 warnings"),
        "{}",
        run.stderr
    );
}

/// `check` names the files of the output folder that should not be there up to a bound, and
/// counts the rest: a pull request's 300,000 files there printed as many lines.
#[test]
fn check_names_many_unexpected_files_up_to_a_bound() {
    let workspace = Fixture::minimal().write();
    workspace.run(&["build", "--all"]);
    let folder = workspace.root().join("examples/prompts/generic");
    for index in 0..150 {
        std::fs::write(folder.join(format!("u{index:03}.md")), "x").unwrap();
    }
    let run = workspace.run(&["check"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let named = run
        .stderr
        .lines()
        .filter(|line| line.starts_with("unexpected: examples/prompts/generic/u"))
        .count();
    assert_eq!(named, 100, "{}", run.stderr);
    assert!(run.stderr.contains("generic/u099.md"));
    assert!(!run.stderr.contains("generic/u100.md"));
    assert!(run.stderr.contains(
        "unexpected: 50 more files that should not be in the output folder, besides the first \
         100 named (counted in the line below, not named one by one)"
    ));
    assert!(
        run.stderr
            .contains("holds 150 file(s) promptc did not write")
    );
    // The JSON lists every one.
    let json = workspace.run(&["check", "--format", "json"]);
    let document: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(document["files"].as_array().unwrap().len(), 150);
}

// A file past the most promptc reads of any file (256 MiB) is written into a revision's copy
// as a file of its length and no content: refused alike, as too large, without a gigabyte
// committed costing its size on disk.
#[test]
fn a_file_of_a_revision_past_what_promptc_reads_is_refused_as_in_the_working_tree() {
    let workspace = repository(&Fixture::minimal());
    let output = script(
        workspace.root(),
        r#"
        head -c 270000000 /dev/zero > components/intro.md
        git add -A && git commit -qm big
        "$P" validate 2>&1 || echo "exit $?"
        echo "--- diff"
        git checkout -q HEAD~1 -- components/intro.md
        "$P" diff --base HEAD --stat 2>&1 || echo "exit $?"
        "#,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let (working_tree, revision) = stdout.split_once("--- diff\n").unwrap();
    let reason =
        "`components/intro.md` is larger than the limit of 8 MiB: promptc does not read it";
    assert!(working_tree.contains(reason), "{working_tree}");
    assert!(working_tree.ends_with("exit 1\n"), "{working_tree}");
    assert!(revision.contains(reason), "{revision}");
    assert!(revision.ends_with("exit 1\n"), "{revision}");
}

// A link's `..` is taken from where the links before it lead, as the system takes it: `lnk`
// → `d/../intro.md` with `d` → `sub/deep` is `sub/intro.md`. Taken as written, it named an
// `intro.md` beside `lnk` that is not there, and the base was told a link to nothing.
#[test]
fn diff_follows_a_link_whose_dot_dot_comes_after_another_link() {
    let workspace = Fixture::minimal()
        .remove("components/intro.md")
        .file(
            "components/intro.toml",
            format!("{}template_file = \"../lnk\"\n", common::COMPONENT),
        )
        .file("sub/intro.md", "Linked intro, first.\n")
        .file("sub/deep/keep.txt", "kept so the folder is committed\n")
        .write();
    let root = workspace.root();
    symlink("sub/deep", root.join("d")).unwrap();
    symlink("d/../intro.md", root.join("lnk")).unwrap();
    let output = script(
        root,
        r#"
        git init -q . && git add -A && git commit -qm base
        "$P" diff --base HEAD --stat
        sed -i 's/first/second/' sub/intro.md
        "$P" diff --base HEAD --stat
        "#,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let (same, changed) = stdout
        .split_once("no compiled prompt differs between HEAD and working tree\n")
        .expect("the unchanged base compiles alike");
    assert!(same.is_empty(), "{stdout}");
    assert!(
        changed.contains("lnk (modified): examples/prompts/generic/basic.md"),
        "{stdout}\n{stderr}"
    );
}

// A folder's suggestion of a near folder looks through a folder of at most a thousand
// entries, files counted; a submodule is an empty folder in a checkout. A revision's copy
// holds what those take: with the files of a crowded folder and its submodules' folders, the
// base is judged as the working tree is (`partial` has no near folder to suggest in a folder
// of 1005 entries; `sub`, a submodule, is a folder).
#[test]
fn diff_judges_a_crowded_folder_and_a_submodule_of_a_revision_as_the_working_tree() {
    let mut fixture = Fixture::minimal().file("partials/p.md", "A partial.\n");
    for index in 0..1005 {
        fixture = fixture.file(&format!("notes/n{index}.txt"), "x\n");
    }
    let workspace = fixture.write();
    let output = script(
        workspace.root(),
        r#"
        git init -q . && git add -A && git commit -qm base
        for manifest in 'partials = "notes/partial"' 'partials = "sub"'; do
            printf 'name = "fixture"\nfallback_family = "generic"\n[paths]\n%s\n' "$manifest" > promptc.toml
            mkdir -p notes/partials sub && cp partials/p.md notes/partials/ && mkdir -p subs && cp partials/p.md subs/
            git add -A && git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,sub
            git commit -qm "$manifest"
            "$P" diff --base HEAD --stat
        done
        "#,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout,
        "no compiled prompt differs between HEAD and working tree\n".repeat(2),
        "{stderr}"
    );
}

// A CI checkout is a shallow clone by default: a base before its history was "unknown", with
// no word of why. The error says the clone is shallow and how to fetch more.
#[test]
fn diff_says_a_revision_may_lie_beyond_a_shallow_clone() {
    let workspace = Fixture::minimal().write();
    let output = script(
        workspace.root(),
        r#"
        git init -q -b main origin && cp -r promptc.toml components variants examples origin/
        cd origin && git add -A && git commit -qm one && git commit -q --allow-empty -m two && cd ..
        git clone -q --depth 1 "file://$PWD/origin" shallow && cd shallow
        "$P" diff --base HEAD~1 --stat || true
        "#,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("unknown revision `HEAD~1`: the repository is a shallow clone")
            && stdout.contains("git fetch --unshallow"),
        "{stdout}\n{stderr}"
    );
}

// A committed link that no system can make (an empty target, or one of 6,000 bytes) failed
// the whole base side with git's message, naming promptc's temporary folder. It is left out
// of the copy, as the file it would be is missing from the working tree too.
#[test]
fn diff_leaves_out_a_committed_link_no_system_can_make() {
    let workspace = Fixture::minimal().write();
    let output = script(
        workspace.root(),
        r#"
        git init -q . && git add -A && git commit -qm base
        long=$(head -c 6000 /dev/zero | tr '\0' a | git hash-object -w --stdin)
        empty=$(printf '' | git hash-object -w --stdin)
        git update-index --add --cacheinfo "120000,$long,partials/long.md"
        git update-index --add --cacheinfo "120000,$empty,partials/empty.md"
        git commit -qm links
        "$P" diff --base HEAD --stat
        "#,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout, "no compiled prompt differs between HEAD and working tree\n",
        "{stderr}"
    );
}

// A workspace that names files in many folders is not listed a folder at a time: each listing
// is a git run (3,000 folders took 3,000 runs a load). Past a bound the whole folder is
// written in one, and the base still compiles as the working tree does.
#[test]
fn diff_of_a_revision_naming_files_in_many_folders_runs_git_a_bounded_number_of_times() {
    let mut fixture = Fixture::minimal().remove("components/intro.md");
    let mut names = Vec::new();
    for index in 0..600 {
        fixture = fixture
            .file(
                &format!("components/c{index}.toml"),
                format!("id = \"c{index}\"\ndescription = \"d\"\ntemplate_file = \"../t/{index}/c.md\"\n"),
            )
            .file(&format!("t/{index}/c.md"), format!("Part {index}.\n"));
        names.push(format!("\"c{index}\""));
    }
    let workspace = fixture
        .file(
            "components/intro.toml",
            format!("{}template = \"Intro.\"\n", common::COMPONENT),
        )
        .write();
    let root = workspace.root();
    let shim = root.join("../bin");
    std::fs::create_dir_all(&shim).unwrap();
    let git_path = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    std::fs::write(
        shim.join("git"),
        format!(
            "#!/bin/sh\ncase \" $* \" in *' ls-tree '*) echo x >> \"{}\";; esac\nexec {} \"$@\"\n",
            root.join("../runs").display(),
            git_path.trim()
        ),
    )
    .unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(shim.join("git"))
        .status()
        .unwrap();
    let output = script(
        root,
        &format!(
            r#"
            git init -q . && git add -A && git commit -qm base
            PATH="{}:$PATH" "$P" diff --base HEAD --stat
            "#,
            shim.display()
        ),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout, "no compiled prompt differs between HEAD and working tree\n",
        "{stderr}"
    );
    let runs = std::fs::read_to_string(root.join("../runs"))
        .unwrap()
        .lines()
        .count();
    assert!(runs <= 300, "{runs} listings");
}

// Five folders of 99,000 entries each (one tree listed under five names), a file named in
// each: every listing is under the bound of one copy, but together they are past what a
// revision's folders may be listed in all, and the revision is refused saying so, where each
// load could list them again.
#[test]
fn a_revision_whose_named_files_lie_in_huge_folders_is_refused_past_a_bound_on_listing() {
    let mut fixture = Fixture::minimal();
    for index in 1..=5 {
        fixture = fixture.file(
            &format!("components/c{index}.toml"),
            format!(
                "id = \"c{index}\"\ndescription = \"d\"\ntemplate_file = \"../f{index}/x.md\"\n"
            ),
        );
    }
    let workspace = repository(&fixture);
    let output = script(
        workspace.root(),
        r#"
        blob=$(echo Part. | git hash-object -w --stdin)
        seq 1 99000 | awk -v b="$blob" '{ printf "100644 blob %s\tf%d.md\n", b, $1 }' > ../listing
        printf '100644 blob %s\tx.md\n' "$blob" >> ../listing
        t=$(git mktree < ../listing)
        top=$( (git ls-tree HEAD; for i in 1 2 3 4 5; do printf '040000 tree %s\tf%d\n' "$t" "$i"; done) | git mktree)
        c=$(git commit-tree "$top" -p HEAD -m huge)
        "$P" diff --base "$c" --stat || echo "exit $?"
        "#,
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stdout.ends_with("exit 1\n"), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("had its folders listed past 400000 entries in all to find the files promptc reads: promptc does not copy it"),
        "{stdout}"
    );
}

// A `paths` setting that names the root through a link (`here` -> `.`) is the root as much as
// `""` or `"."`: refused at the setting, and the root is not read as a folder of tools
// (promptc.toml and every other file were read as one), nor is `new` let write there.
#[test]
fn a_folder_setting_linked_to_the_root_is_refused_at_the_setting() {
    let workspace = Fixture::minimal()
        .file(
            "promptc.toml",
            format!("{}\n[paths]\ntools = \"here\"\n", common::MANIFEST),
        )
        .write();
    symlink(".", workspace.root().join("here")).unwrap();
    let validation = workspace.validate();
    let diagnostics = validation.diagnostics();
    assert_eq!(validation.codes(), ["invalid-value"], "{diagnostics:?}");
    assert_eq!(
        (diagnostics[0].file.as_str(), diagnostics[0].line),
        ("promptc.toml", 5)
    );
    assert!(
        diagnostics[0]
            .message
            .contains("`paths.tools` must name a folder below the workspace root"),
        "{diagnostics:?}"
    );
    let made = workspace.run(&["new", "tool", "zz"]);
    assert_eq!(made.code, 2, "{}", made.stderr);
    assert!(!workspace.root().join("zz.toml").exists());
}

// Paths the command line names (`build --out`, `schema --out`, `context --out`, `--rules`,
// `--global-rules`) that lie in the workspace went through a link the pull request made to a
// folder outside: the prompts, schemas or context were written there, and Markdown there was
// read into the prompt. Each is refused, naming the link; the same paths outside the
// workspace are the caller's, and a folder of the workspace that is no link is written.
#[cfg(unix)]
#[test]
fn paths_the_command_line_names_in_the_workspace_do_not_leave_it_through_a_link() {
    let workspace = Fixture::minimal().write();
    let root = workspace.root();
    let outside = workspace.tmp().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("AGENTS.md"), "OUTSIDE-RULES\n").unwrap();
    std::os::unix::fs::symlink("../outside", root.join("dist")).unwrap();
    for args in [
        &["build", "--context", "basic", "--out", "dist"][..],
        &["schema", "--out", "dist"],
        &["context", "--context", "basic", "--out", "dist/ctx.json"],
        &["build", "--context", "basic", "--rules", "dist"],
        &["build", "--context", "basic", "--global-rules", "dist"],
        &["explain", "--context", "basic", "--rules", "dist"],
    ] {
        let run = workspace.run(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(
            run.stderr
                .contains("error: dist is a symbolic link to ../outside, outside the workspace"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(!run.stdout.contains("AGENTS"), "{args:?}: {}", run.stdout);
    }
    let mut left: Vec<String> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["AGENTS.md"], "written outside the workspace");
    // Named outside the workspace, the folder is the caller's; inside, a plain folder is fine.
    for out in [outside.to_str().unwrap(), "plain"] {
        let run = workspace.run(&["build", "--context", "basic", "--out", out]);
        assert_eq!(run.code, 0, "{out}: {}", run.stderr);
    }
    assert!(outside.join("generic.md").is_file());
    assert!(root.join("plain/generic.md").is_file());
    let rules = workspace.run(&[
        "explain",
        "--context",
        "basic",
        "--rules",
        outside.to_str().unwrap(),
    ]);
    assert_eq!(rules.code, 0, "{}", rules.stderr);
    assert!(
        rules.stdout.contains("(agents rule AGENTS.md)"),
        "{}",
        rules.stdout
    );
}

/// An absolute path to a file or folder of the workspace is refused as absolute, with the
/// relative path to write, not as a path that leaves the workspace; one outside it does leave.
#[test]
fn an_absolute_path_into_the_workspace_is_told_its_relative_form() {
    let workspace = Fixture::minimal().write();
    let root = workspace.root().canonicalize().unwrap();
    let component = format!(
        "id = \"intro\"\ndescription = \"d\"\ntemplate_file = \"{}\"\n",
        root.join("components/intro.md").display()
    );
    std::fs::write(workspace.root().join("components/intro.toml"), component).unwrap();
    let manifest = std::fs::read_to_string(workspace.root().join("promptc.toml")).unwrap();
    let manifest = format!(
        "{manifest}\n[paths]\ntools = \"{}\"\n",
        root.join("tools").display()
    );
    std::fs::write(workspace.root().join("promptc.toml"), manifest).unwrap();
    let validation = workspace.validate();
    let mut absolute: Vec<_> = validation
        .diagnostics()
        .into_iter()
        .enumerate()
        .filter(|(_, d)| d.code == "absolute-path")
        .map(|(index, d)| (d.file, validation.help(index).map(str::to_owned)))
        .collect();
    absolute.sort();
    let help = |relative: &str| {
        Some(format!(
            "write `{relative}`, the same place relative to the file that names it"
        ))
    };
    assert_eq!(
        absolute,
        [
            ("components/intro.toml".to_string(), help("intro.md")),
            ("promptc.toml".to_string(), help("tools")),
        ],
        "{:#?}",
        validation.diagnostics()
    );
    // Outside the workspace, the path leaves it.
    let outside = "id = \"intro\"\ndescription = \"d\"\ntemplate_file = \"/etc/hostname\"\n";
    std::fs::write(workspace.root().join("components/intro.toml"), outside).unwrap();
    assert!(
        workspace
            .validate()
            .codes()
            .contains(&"path-escapes-workspace".to_string())
    );
}
