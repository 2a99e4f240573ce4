"""What a session holds as a list is one memory: the user's one-off asks, the agent's todo
steps, the files it touched but nothing else names; a rule stays a preference, a key file
an entity. A project fact with no key is kept; one assistant message's findings are one
memory (a turn's: what the assistant said between two user messages), and a step it proposes or a supposition ("If I look at …") is none."""

from __future__ import annotations

from pathlib import Path

import pytest

import ctxsdk as cx
from ctxsdk.memory import _facts_in
from ctxsdk.memory._gather import GATHERED_MAX
from ctxsdk.memory._ingest import extract
from ctxsdk.memory._model import Candidate
from ctxsdk.testing import LogBuilder, ToolOutput

APP = "/home/dev/app"


def _session(session_id: str = "g") -> cx.Session:
    b = LogBuilder(session_id=session_id, runtime_context=None, cwd=APP)
    b.turn(
        "we don't control claude code process - it's 3rd party tool that codemie cli is calling"
    ).assistant(text="Understood.").end_turn()
    todos = [
        {"content": "Review current session tracking implementation", "status": "pending"},
        {"content": "Design approach for session lifecycle tracking", "status": "pending"},
    ]
    b.turn("don't produce code, design solution first").assistant(
        tool_calls=[("TodoWrite", {"todos": todos})]
    )
    b.tool_results(["ok"]).next_step().assistant(text="Plan ready.").end_turn()
    b.turn("revise proposal.").assistant(text="Revised.").end_turn()
    b.turn("create hello.md file").assistant(
        tool_calls=[("Write", {"file_path": f"{APP}/hello.md", "content": "# Hello"})]
    )
    b.tool_results(["ok"]).next_step()
    for p in ("src/a.ts", "src/b.ts"):
        edit = {"file_path": f"{APP}/{p}", "old_string": "x = 1", "new_string": "x = 2"}
        b.assistant(tool_calls=[("Edit", edit)])
        b.tool_results(["ok"]).next_step()
    b.assistant(text="Done.").end_turn()
    return cx.Session.from_events(b.header, b.events)


def _kind(cands: tuple[Candidate, ...], kind: str) -> list[Candidate]:
    return [c for c in cands if c.extra.get("kind") == kind]


def test_one_off_asks_are_one_line_and_rules_stay_preferences() -> None:
    ex = extract(_session())
    prefs = [c.text for c in ex.candidates if c.type == "preference"]
    assert prefs == ["don't produce code, design solution first"]
    (asks,) = _kind(ex.candidates, "asks")
    assert asks.type == "experience"
    assert asks.text == "the user asked: revise proposal; create hello.md file"
    assert ("about", "hello.md") in asks.links


def test_todo_steps_are_one_plan_decision() -> None:
    ex = extract(_session())
    (plan,) = [c for c in ex.candidates if c.type == "decision"]
    assert plan.extra["kind"] == "plan"
    assert plan.text == (
        "plan: Review current session tracking implementation; "
        "Design approach for session lifecycle tracking"
    )


def test_a_file_nothing_else_names_is_a_line_a_named_one_an_entity() -> None:
    ex = extract(_session())
    names = {c.name for c in ex.candidates if c.type == "entity"}
    assert "hello.md" in names  # the user named it
    assert not {"src/a.ts", "src/b.ts"} & names
    (files,) = _kind(ex.candidates, "files")
    assert "edited src/a.ts" in files.text and "edited src/b.ts" in files.text


def test_a_project_fact_with_no_key_is_an_entity_in_its_own_words() -> None:
    ex = extract(_session())
    said = [c for c in ex.candidates if c.type == "entity" and "3rd party" in c.text]
    assert len(said) == 1 and "key" not in said[0].extra


def test_gathered_lines_are_found_in_a_memory(tmp_path: Path) -> None:
    with cx.Memory(tmp_path / "m.db", embedder=None) as mem:
        mem.ingest(_session())
        hits = mem.find("what did the user ask to create?")
        assert any("create hello.md file" in h.node.text for h in hits[:5])
        # the same session again adds nothing; another session's asks are their own line
        mem.ingest(_session())
        mem.ingest(_session("g2"))
        asks = [n for n in mem.nodes("experience") if n.extra.get("kind") == "asks"]
        assert len(asks) == 1 and len(asks[0].sources) == 2


def test_one_messages_findings_are_one_memory_and_no_proposed_step() -> None:
    b = LogBuilder(session_id="f", runtime_context=None)
    b.turn("How is the session tracked?").assistant(
        text=(
            "SessionStore keeps its state in ~/.codemie/sessions/{sessionId}.json. "
            "The correlation in SessionOrchestrator.afterAgentSpawn() runs once. "
            "HistoryParser reads ~/.claude/history.jsonl for the /clear command. "
            "Each tab writes its own file under ~/.claude/projects/ with a new UUID. "
            "The sync plugin posts 50 records per batch to the metrics API."
        )
    ).end_turn()
    b.turn("And the adapter?").assistant(
        text="Add SessionLifecycleAdapter interface with detectSessionEnd() method"
    ).end_turn()
    b.turn("And prepare_method?").assistant(
        text="If I look at requests/models.py, PreparedRequest.prepare_method might match."
    ).end_turn()
    ex = extract(cx.Session.from_events(b.header, b.events))
    found = _kind(ex.candidates, "finding")
    assert len(found) == 1  # the first reply's list, one answer
    said = [found[0].text.index(w) for w in ("{sessionId}", "afterAgentSpawn()", "history.jsonl")]
    assert said == sorted(said)  # in the order said
    assert found[0].name.startswith("found: SessionStore keeps")
    assert "SessionLifecycleAdapter" not in found[0].text  # a step it proposes
    assert "If I look" not in found[0].text  # thinking aloud


def test_the_same_error_said_twice_is_one_experience() -> None:
    b = LogBuilder(session_id="e", runtime_context=None)
    quota = (
        "litellm.RateLimitError: VertexAIException - 429: Quota exceeded for "
        "aiplatform.googleapis.com/online_prediction_{}_tokens_per_minute_per_base_model "
        "with base model: anthropic-claude-sonnet-4."
    )
    b.turn("Run the suite with pytest -q please.").assistant(
        tool_calls=[("bash", {"cmd": "pytest -q"})]
    )
    b.tool_results([ToolOutput.failed(quota.format("input"), "ExitCode", "1")]).next_step()
    b.assistant(tool_calls=[("bash", {"cmd": "pytest -q tests"})])
    b.tool_results([ToolOutput.failed(quota.format("output"), "ExitCode", "1")]).next_step()
    b.assistant(text="The quota is exhausted.").end_turn()
    ex = extract(cx.Session.from_events(b.header, b.events))
    errors = _kind(ex.candidates, "error")
    assert len(errors) == 1 and "input_tokens" in errors[0].text
    assert any(why == "duplicate" and "output_tokens" in t for t, why in ex.dropped)


def test_two_project_facts_that_open_alike_are_two_entities() -> None:
    from ctxsdk.session import Fact
    from ctxsdk.session._facts import FactSource

    s = _session()
    opening = "we don't control the claude code process - it is "
    facts = [
        Fact(
            kind="project", text=opening + "a 3rd party tool", source=FactSource("g", 1, "user", "")
        ),
        Fact(
            kind="project",
            text=opening + "started by the IDE",
            source=FactSource("g", 3, "user", ""),
        ),
    ]
    ents = [c for c in extract(s, facts=facts).candidates if c.type == "entity"]
    assert len({c.name for c in ents}) == 2 and all(c.name == c.text for c in ents)


def test_the_rules_of_a_pasted_prompt_are_one_preference() -> None:
    prompt = (
        "You are the Analyzer Agent. YOU DO NOT write final code (that is developer's job). "
        "YOU DO NOT run builds or tests. YOU DO NOT mutate state. "
        "Do not waste tokens reading the root CLAUDE.md unless explicitly requested. "
        "If the answer is found — stop. "
        "If you hit the budget before reaching a conclusion — report what remains UNVERIFIED."
    )
    b = LogBuilder(session_id="r", runtime_context=None)
    b.turn(prompt).assistant(text="Understood.").end_turn()
    b.turn("never push to main").assistant(text="Noted.").end_turn()
    ex = extract(cx.Session.from_events(b.header, b.events))
    (rules,) = _kind(ex.candidates, "rules")
    assert rules.type == "preference" and rules.name.startswith("rules: YOU DO NOT write")
    for said in ("YOU DO NOT run builds or tests", "CLAUDE.md", "UNVERIFIED"):
        assert said in rules.text
    prefs = [c.text for c in ex.candidates if c.type == "preference" and c is not rules]
    assert prefs == ["never push to main"]  # a rule said on its own stays one memory


def test_the_findings_of_one_turn_are_one_memory() -> None:
    b = LogBuilder(session_id="t", runtime_context=None)
    b.turn("Why does the request send b'GET'?").assistant(
        text="Session.request calls builtin_str(method) in requests/sessions.py.",
        tool_calls=[("bash", {"cmd": "grep -n builtin_str requests/compat.py"})],
    )
    b.tool_results(["14: builtin_str = str"]).next_step()
    b.assistant(text="On Python 3 builtin_str is an alias for str in requests/compat.py.")
    b.end_turn()
    b.turn("And the fix?").assistant(
        text="The fix uses to_native_string(method) from requests/utils.py."
    ).end_turn()
    found = _kind(extract(cx.Session.from_events(b.header, b.events)).candidates, "finding")
    assert len(found) == 2  # one per turn
    first, second = sorted(found, key=lambda c: c.source.seq)
    assert "builtin_str(method)" in first.text and "alias for str" in first.text
    assert "to_native_string(method)" in second.text and "builtin_str" not in second.text


def test_a_long_turns_findings_are_kept_past_a_gathered_lines_length() -> None:
    said = " ".join(
        f"The handler for the /api/v{i}/items route lives in src/routes/items_v{i}.py and "
        f"reads its page size from ITEMS_V{i}_PAGE_SIZE, set to {i * 10} in config/v{i}.toml."
        for i in range(1, 11)
    )
    b = LogBuilder(session_id="l", runtime_context=None)
    b.turn("Where are the item routes handled?").assistant(text=said).end_turn()
    (found,) = _kind(extract(cx.Session.from_events(b.header, b.events)).candidates, "finding")
    assert len(found.text) > GATHERED_MAX
    assert "src/routes/items_v1.py" in found.text and "config/v10.toml" in found.text


def test_the_steps_the_assistant_proposed_are_one_decision() -> None:
    """A report's recommendations are what was decided to do next: one ``proposed`` line
    per session; an aside ("Wait, …") and a label with its value ("Test counts: …") that
    the kernel reads as orders are none."""
    b = LogBuilder(session_id="p", runtime_context=None)
    b.turn("Review the plugin system for adaptability.").assistant(
        text=(
            "Refactor Registries: Convert `AgentRegistry` to scan a directory for dynamic "
            "plugin loading.\n"
            "Wait, `loadPlugins()` returns None when the folder is missing.\n"
            "Test counts: 141 tests (127 unit + 14 doctests), all passing.\n"
            "Note that `render()` does NOT pass usetex here.\n"
            "Then replace(' ', r'\\ ') in `_escape.py`.\n"
            "So replacing ' ' in `_escape.py` seems like a viable solution, but I need to be "
            "careful."
        )
    ).end_turn()
    b.turn("Anything else?").assistant(
        text="Install the keyboard package (`pip install keyboard`) before you run it."
    ).end_turn()
    ex = extract(cx.Session.from_events(b.header, b.events))
    (line,) = [c for c in ex.candidates if c.extra.get("kind") == "proposed"]
    assert line.type == "decision" and line.text.startswith("the assistant proposed: ")
    assert "AgentRegistry" in line.text and "pip install keyboard" in line.text
    assert "Wait" not in line.text and "Test counts" not in line.text
    assert "usetex" not in line.text and "_escape.py" not in line.text  # aside, code
    assert line.text.index("AgentRegistry") < line.text.index("keyboard")  # as said


def test_the_projects_language_and_framework_are_one_stack_entity() -> None:
    s = _real_or_skip("aider/aider-website__hello-world-flask.md")
    ex = extract(s)
    names = {c.name for c in ex.candidates if c.type == "entity"}
    assert "language" not in names and "framework" not in names
    (stack,) = [c for c in ex.candidates if c.name == "stack"]
    assert stack.extra["value"] == "Python, Flask"
    assert "programming language Python" in stack.text and "framework Flask" in stack.text


def test_a_task_templates_rules_are_one_line_of_the_harness() -> None:
    """The rules a harness's task template sets (SWE-agent's tips) are one preference line,
    said by the harness, not one memory each; the model the harness states at every start
    is none unless the session switched it."""
    s = _real_or_skip("swe-agent/ctf_crypto__katy.traj")
    ex = extract(s)
    (rules,) = [c for c in ex.candidates if c.extra.get("kind") == "rules"]
    assert rules.type == "preference" and rules.text.startswith("the harness's rules")
    assert "`-c` flag" in rules.text and "nc -w5" in rules.text
    assert not any("-c` flag" in c.text for c in ex.candidates if c is not rules)
    mini = extract(_real_or_skip("mini-swe-agent/django__django-11163.traj.json"))
    assert not any(c.name == "model" for c in mini.candidates)
    aider = extract(_real_or_skip("aider/Monochromatic__.aider.chat.history.md"))
    by_name = {c.name: c for c in aider.candidates if c.type == "entity"}
    # switched in the session: which model worked is part of what it learned
    assert "gemini-2.5-pro-preview-05-06" in by_name["model"].text
    assert "earlier" in by_name["model"].extra
    assert "gemini-2.5-flash-preview-04-17" in by_name["weak model"].text


def _real_or_skip(rel: str) -> cx.Session:
    import pytest

    from ctxsdk.bench._realworld import corpus_dir, load_session

    root = corpus_dir()
    if root is None or not (root / rel).exists():
        pytest.skip("the agent-sessions corpus is not here")
    return load_session(root, rel)


def test_the_users_questions_are_asks_in_the_order_said() -> None:
    """A question the person asked is an ask as much as an order: one line, in the order
    said; a question the kernel already read as an ask ("can you add a test?") is not
    listed twice."""
    b = LogBuilder(session_id="q", runtime_context=None)
    b.turn("what's 1+1?").assistant(text="1 + 1 equals 2.").end_turn()
    b.turn("create hello.md file").assistant(text="Created hello.md.").end_turn()
    b.turn("can you add a test for it?").assistant(text="Added test_hello.py.").end_turn()
    ex = extract(cx.Session.from_events(b.header, b.events))
    (asks,) = [c for c in ex.candidates if c.extra.get("kind") == "asks"]
    assert asks.text.startswith("the user asked: what's 1+1?; create hello.md file")
    assert asks.text.count("add a test") == 1


def test_a_proposal_opens_on_an_order_word() -> None:
    from ctxsdk.memory._facts_in import _proposal

    assert _proposal("Install the keyboard package (pip install keyboard)")
    assert _proposal("Refactor Registries: Convert AgentRegistry to scan a directory")
    for said in (
        "print('Line 1\\nLine 2', end='')",  # code
        "_binary_clf_curve raises error if y_true is not valid",  # a code name
        "So replacing ' ' with \\ seems like a viable solution, but I need to be careful",
        "Note that it does NOT pass usetex here",
        "Wait, if return_annotation is None, the check fails",
    ):
        assert not _proposal(said), said


def test_only_a_statement_that_names_something_is_read_as_a_proposed_step(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a statement naming nothing is never kept as a finding, so whether it proposes a step
    # is not read (a long chat's sentences are mostly such)
    read: list[str] = []
    real = _facts_in._proposed_step

    def spy(sentence: str) -> bool:
        read.append(sentence)
        return real(sentence)

    monkeypatch.setattr(_facts_in, "_proposed_step", spy)
    b = LogBuilder(session_id="g", runtime_context=None)
    b.turn("How was the trip?").assistant(
        text=(
            "We walked along the river for most of the afternoon. "
            "The config now lives in src/settings.toml after the move. "
            "Add SessionLifecycleAdapter interface with detectSessionEnd() method."
        )
    ).end_turn()
    ex = extract(cx.Session.from_events(b.header, b.events))
    assert not any("river" in s for s in read)
    assert any("settings.toml" in s for s in read)
    assert any("SessionLifecycleAdapter" in s for s in read)
    found = _kind(ex.candidates, "finding")
    assert [c.text for c in found] == ["The config now lives in src/settings.toml after the move."]
