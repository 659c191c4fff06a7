"""The failure as pytest prints it, each thing said once: a test's source lines without the
words its error message already says, and the engine the test runs named for what it is.

pytest prints the source of each frame, then the error (the `E` lines). A test whose message
is written out in its source (`assert ok, "the penalty does not require grad: ..."`, or the
words handed to a check) would show the same sentence twice, once as code and once as the
error: the source keeps `"(message below)"` in its place. The engine a test gets is the reference module
with the learner's pieces in it; pytest would show it as `<module 'reference' from ...>`,
which reads as if the model solution were graded.
"""
import ast
import re

LEARNER_ENGINE = "<engine: your pieces + the reference's>"
MODEL_ENGINE = "<engine: the model solutions>"
SAID = '"(message below)"'  # the words are in the error under the source
SHORTEST = 20  # a shorter literal is code (a key, a name, a format), not the message's words

_MODULE = re.compile(r"^<module 'reference' from .*>$")
_LITERAL = re.compile(r"""(?<![\w'"])([rRbBuUfF]{0,2})("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')""")
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def tidy(longrepr, learner_paths=frozenset(), engine=LEARNER_ENGINE):
    """Change pytest's long form of a failure in place (anything else is left as it is)."""
    chain = getattr(longrepr, "chain", None)
    if not chain:
        return
    entries = [entry for reprtraceback, _, _ in chain for entry in getattr(reprtraceback, "reprentries", ())]
    message = _words(line[1:] for entry in entries for line in getattr(entry, "lines", ()) if line.startswith("E"))
    for entry in entries:
        funcargs = getattr(entry, "reprfuncargs", None)
        if funcargs is not None:
            funcargs.args = [(name, engine if _MODULE.match(str(value)) else value) for name, value in funcargs.args]
        lines = getattr(entry, "lines", None)
        if lines and message and not _in_learner_file(entry, learner_paths):
            entry.lines = without_said(lines, message)


def without_said(lines, message, placeholder=SAID):
    """The source `lines` with each literal whose words are in `message` (normalized spaces)
    replaced by `placeholder` (a short one too where it goes on from one replaced on the line
    above); a line that starts with a replaced one joins the line above. `placeholder` may be
    a function of the literal's match instead (`its_start`)."""
    replacement = placeholder if callable(placeholder) else (lambda found: placeholder)
    joins = isinstance(placeholder, str)  # a fixed placeholder can join the line above's
    kept, in_docstring = [], False
    for line in lines:
        if line.startswith("E"):
            kept.append(line)
            continue
        if in_docstring or _opens_docstring(line):  # the test's own explanation, kept whole: a
            # placeholder there read as its words (the fifth walk: `torch: "(message below)".`)
            quotes = line.count('"""') + line.count("'''")
            in_docstring = quotes % 2 == (0 if in_docstring else 1)
            kept.append(line)
            continue
        going_on = joins and bool(kept) and kept[-1].rstrip().endswith(placeholder)
        shortest = 1 if going_on else SHORTEST  # (going on: the words go on from the line above)
        shown = _LITERAL.sub(lambda found: replacement(found)
                             if _said_in(found, message, shortest) and not _an_operand(line, found)
                             else found.group(0), line)
        if going_on and shown != line and shown.strip().startswith(placeholder):
            kept[-1] = kept[-1].rstrip() + shown.strip()[len(placeholder):]  # `"(…)", x=W)` joins `f(a, "(…)"`
            continue
        kept.append(shown)
    return kept


def its_start(found):
    """A literal cut to its first words: a learner's own line under the sentence that says its
    words stays recognizably the line they wrote ("(the words above)" read as a misquote: the
    fifth walk), and the words are not said twice."""
    prefix, quoted = found.group(1), found.group(2)
    words = quoted[1:-1].split()
    return f"{prefix}{quoted[0]}{' '.join(words[:min(4, len(words) // 2)])} …{quoted[0]}"


def _opens_docstring(line):
    """A source line (pytest's `>` marker aside) that starts with triple quotes."""
    code = line.lstrip(">").strip()
    return code.startswith(('"""', "'''", 'r"""'))


def _an_operand(line, found):
    """A literal added to something (`expected = MODIFIED + "..."`) is data the test computes
    with, not its message: a placeholder there would read as the value expected."""
    return line[: found.start()].rstrip().endswith("+") or line[found.end():].lstrip().startswith("+")


def _said_in(found, message, shortest=SHORTEST):
    prefix, quoted = found.group(1).lower(), found.group(2)
    if "b" in prefix:
        return False
    parts = _PLACEHOLDER.split(quoted[1:-1]) if "f" in prefix else [quoted[1:-1]]
    texts = []
    for part in parts:
        try:
            texts.append(part if "r" in prefix else ast.literal_eval(quoted[0] + part + quoted[0]))
        except (SyntaxError, ValueError):
            return False
    if len("".join(texts).strip()) < shortest:
        return False
    return all(_words([text]) in message for text in texts if text.strip())


def _words(texts):
    return " ".join(" ".join(texts).split())


def _in_learner_file(entry, learner_paths):
    """A learner's own code is shown as they wrote it."""
    location = getattr(entry, "reprfileloc", None)
    path = str(getattr(location, "path", ""))
    return any(path and (path == str(p) or str(p).endswith(path)) for p in learner_paths)
