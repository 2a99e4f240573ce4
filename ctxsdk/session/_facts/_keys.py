"""Keys and values of settings: one normalized key per setting however it is phrased, and a
strict check that a phrase names a thing someone would configure or decide.

A key is lowercase words: markdown, determiners, possessives and filler dropped ("the", "our",
"this project's", "current", "new", ``我们的``), snake/kebab/camel case split into words
(``requestTimeout``, ``request_timeout``, ``REQUEST-TIMEOUT`` -> ``request timeout``), a few
short forms spelled out (``db`` -> ``database``), the last word made singular where that is
safe, and Chinese keys of known terms given in English (``请求超时`` -> ``request timeout``)
so that two languages meet in one key. A phrase is refused as a key when it is not a short
noun phrase: a pronoun, a verb, a function word, a number, code (brackets, operators, paths,
dotted names), a label ("note", "thought") or a head noun that names no setting ("issue",
"fix", "function", "file" alone); nor when it starts with a count ("fourteen payment tests")
or an action verb ("create a new folder"), or holds an article (a clause, not a name).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "DOMAINS",
    "KeyPhrase",
    "domain_of",
    "is_setting_head",
    "key_phrase",
    "singular",
]

CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def _domains() -> Mapping[str, str]:
    table = {
        "package manager": "npm pnpm yarn bun pip pipx poetry uv pipenv conda cargo maven gradle",
        "database": "postgresql postgres mysql mariadb sqlite sqlite3 mongodb mongo dynamodb "
        "cassandra oracle mssql duckdb cockroachdb",
        "cache": "redis memcached valkey",
        "test framework": "pytest unittest jest vitest mocha jasmine rspec",
        "web framework": "django flask fastapi express rails laravel nextjs next.js phoenix",
        "frontend framework": "react vue svelte angular solid",
        "language": "python typescript javascript rust golang java kotlin ruby elixir",
        "bundler": "webpack vite rollup esbuild parcel",
        "linter": "ruff flake8 pylint eslint oxlint biome",
        "formatter": "black prettier",
        "container runtime": "docker podman",
        "ci": "jenkins circleci travis",
        "cloud": "aws gcp azure",
        "queue broker": "kafka rabbitmq",
        "type checker": "mypy pyright",
    }
    return MappingProxyType({v: key for key, vs in table.items() for v in vs.split()})


DOMAINS: Mapping[str, str] = _domains()


def domain_of(*values: str) -> str | None:
    """The key a well-known value belongs to (``pnpm`` -> ``package manager``), if any."""
    for v in values:
        low = v.lower().strip("`*_ ")
        if low in DOMAINS:
            return DOMAINS[low]
        head = low.split()[0] if low.split() else ""
        if head in DOMAINS and len(low.split()) <= 2:
            return DOMAINS[head]
    return None


# Short forms a key is often written in, spelled out so that "the db" meets "the database".
_SHORT: Mapping[str, str] = MappingProxyType(
    {
        "db": "database",
        "dbs": "database",
        "repo": "repository",
        "repos": "repository",
        "env": "environment",
        "cfg": "configuration",
        "config": "configuration",
        "pkg": "package",
        "deps": "dependencies",
        "k8s": "kubernetes",
        "dir": "directory",
        "max": "max",
        "maximum": "max",
        "min": "min",
        "minimum": "min",
        "num": "number",
        "ttl": "ttl",
    }
)

# Chinese terms a key is made of, longest first when matched; a key wholly made of them is
# given in English.
_ZH_TERMS: Mapping[str, str] = MappingProxyType(
    {
        "超时时间": "timeout",
        "超时": "timeout",
        "请求": "request",
        "连接池": "connection pool",
        "连接": "connection",
        "端口号": "port",
        "端口": "port",
        "数据库": "database",
        "缓存": "cache",
        "默认": "default",
        "分支": "branch",
        "版本号": "version",
        "版本": "version",
        "编程语言": "language",
        "语言": "language",
        "框架": "framework",
        "测试框架": "test framework",
        "包管理器": "package manager",
        "包管理工具": "package manager",
        "主机名": "host",
        "主机": "host",
        "地址": "address",
        "日志级别": "log level",
        "日志": "log",
        "级别": "level",
        "重试次数": "retry count",
        "重试": "retry",
        "次数": "count",
        "上限": "limit",
        "最大": "max",
        "最小": "min",
        "大小": "size",
        "区域": "region",
        "地区": "region",
        "模式": "mode",
        "格式": "format",
        "编码": "encoding",
        "线程数": "thread count",
        "并发数": "concurrency",
        "并发": "concurrency",
        "内存": "memory",
        "部署目标": "deploy target",
        "部署": "deploy",
        "目标": "target",
        "环境": "environment",
        "间隔": "interval",
        "延迟": "delay",
        "时区": "timezone",
        "主题": "theme",
        "缩进": "indentation",
        "接口": "api",
        "队列": "queue",
        "存储": "storage",
        "批大小": "batch size",
        "批量大小": "batch size",
        "过期时间": "ttl",
        "有效期": "ttl",
        "服务器": "server",
        "运行时": "runtime",
        "构建工具": "build tool",
        "镜像": "image",
        "模型": "model",
        "前端框架": "frontend framework",
        "前端": "frontend",
        "后端框架": "backend framework",
        "后端": "backend",
        "功能": "feature",
        "会话": "session",
        "对象存储": "object storage",
        "温度": "temperature",
        "长度": "length",
        "宽度": "width",
        "高度": "height",
        "字体": "font",
        "数量": "count",
        "最大连接数": "max connections",
        "连接数": "connection count",
    }
)
# Chinese heads that name no setting (as ``_BAD_HEADS``): result, problem, reason, answer ...
_ZH_BAD_HEADS = tuple(
    "结果 问题 原因 答案 文件 代码 函数 方法 错误 输出 输入 变量 步骤 例子 示例 摘要 总结 "
    "说明 注释 建议 方案 想法 计划 任务 目标 情况 行 值".split()
)
_ZH_ORDER = sorted(_ZH_TERMS, key=len, reverse=True)

# Head nouns that name a setting: a key ending in one may take any short value.
_SETTING_HEADS = frozenset(
    "timeout ttl port host hostname url endpoint database engine backend provider framework "
    "library language runtime version manager branch region zone limit cap size count max min "
    "threshold interval delay duration period retention retry attempt concurrency worker "
    "thread mode level format encoding charset locale timezone theme indentation indent width "
    "height target platform os architecture model strategy policy tool toolchain compiler "
    "interpreter linter formatter bundler runner broker queue cache store storage registry "
    "cdn ci server driver adapter protocol algorithm schema directory folder prefix suffix "
    "command environment profile stage budget quota rate ratio precision seed temperature "
    "dimension batch epoch sink exporter editor shell font image node python node.js java "
    "remote origin upstream org organization namespace cluster account project package "
    "dependency plugin service api client sdk gateway proxy balancer router scheduler "
    "deadline memory cpu disk replica pool connection license default".split()
)

# Words that never start a key, and words never inside one.
_NOT_FIRST = frozenset(
    "let here there what which why how now also then so but and just only first next last "
    "another other same following above below previous original expected actual final "
    "each every all both some any no one none such whole entire most many more less few "
    "overall exactly basically simply clearly old new before after current".split()
    # a count starts a report ("fourteen payment tests pass"), not a setting's name
    + "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty hundred thousand dozen "
    "several multiple".split()
    # an action verb starts an ask ("create a new folder: dist/dags/"), not a setting's name
    + "create add remove delete put copy rename fix implement ensure try show tell give "
    "please".split()
)
# An article inside a phrase makes it a clause or a verb phrase ("run the build"): a key is
# a bare noun phrase (its leading determiners are dropped first).
_ARTICLE = frozenset("a an the".split())
_NOT_IN = frozenset(
    "i me my mine we us our ours you your yours he him his she her hers it its they them "
    "their theirs this that these those who whom whose which what where when why how "
    "is are was were be been being am do does did done doing have has had having will "
    "would can could should shall may might must let make makes made get gets got need "
    "needs see seems seem look looks and or but if then so because as at by in on to "
    "with from into onto than like about over under after before while since until not "
    "no never just also only even still already very really actually probably maybe "
    "perhaps there here please thanks yes okay ok well also too everything nothing something "
    "anything everyone someone".split()
)
# Head nouns that name no setting: work items, code parts, discourse.
_BAD_HEADS = frozenset(
    "issue problem fix reason result error function method class code line change goal "
    "task thought step plan approach solution idea question answer point thing way "
    "difference case example note summary bug cause behavior behaviour test tests output "
    "input call return argument parameter variable property attribute field object item "
    "string list dict array tuple message text content data part piece section word "
    "sentence paragraph number lot bit kind sort side rest end start beginning middle "
    "logic implementation fact truth matter concern risk benefit advantage downside "
    "tradeoff trade-off option choice alternative suggestion recommendation requirement "
    "assumption hypothesis conclusion finding observation analysis explanation description "
    "comment docstring todo fixme hint tip warning caveat important update status progress "
    "review feedback response reply request success failure pass fail attempt try "
    "commit diff patch pr report trace traceback stack exception snippet example "
    "user users person people team everyone someone anyone nobody agent assistant model's "
    "score value values name type key flag option setting state time date".split()
)
# Short keys that name a setting on their own.
_SHORT_KEYS = frozenset(
    "os ci cd api cdn ttl tls ssl url uri ui db env log jdk sdk cpu gpu ram vm dns ide "
    "orm lr".split()
)
# Heads a relation verb makes specific enough ("users sign in through", "output is sent to").
_LOOSE_OK = frozenset(
    "user users data key request message output input content response log person people "
    "team everyone value test build".split()
)
_QUANT = re.compile(
    r"^(?:(?:each|every|all|any|most|both)\s+(?:of\s+(?:the|our|its|their)\s+)?)+", re.I
)
# Heads too vague on their own ("the file", "the version"): they need a qualifier.
_NEEDS_QUALIFIER = frozenset(
    "file command name version path directory folder url mode type level size limit format "
    "target source default count length max min rate image service project package "
    "server client node tool model".split()
)
_LABELS = frozenset(
    "note notes thought thoughts todo tip hint warning important update summary answer "
    "question result example output input error reason status step case observation "
    "action response fyi ps caveat".split()
)

_OWN = frozenset("project repository repo app application codebase service team".split())
_DET = re.compile(
    r"^(?:(?:(?:the|this|that|our|my|your|their)\s+[\w-]+'s|the|a|an|our|my|your|their|its|"
    r"his|her|this|that|these|those|current|new|present|existing)\s+)+",
    re.I,
)
_ZH_DET = re.compile(
    r"^(?:我们的|我们|咱们的|本项目的|这个项目的|项目的|这个|那个|该|本|我的|你的|当前的|当前|现在的|新的)+"
)
_ZH_BAD = re.compile(r"[我你他她它这那了吗呢吧把被]|因为|所以|如果|但是|而且|没有|可以|需要|应该")
_MD = re.compile(r"\*\*|__|[*`~]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_CODEY = re.compile(r"[()\[\]{}<>=+|&$\\;,\"!?@#%^/]|\.\w|::|->")


def singular(word: str) -> str:
    """A safe singular of an English word ("retries" -> "retry", "status" stays)."""
    if len(word) <= 3 or not word.endswith("s") or not word.isascii():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ss", "us", "is", "os", "ses", "xes", "zes", "ches", "shes")):
        return word
    return word[:-1]


def _zh_key(text: str) -> str | None:
    """A Chinese key made wholly of known terms, in English; else None."""
    out: list[str] = []
    i = 0
    while i < len(text):
        for term in _ZH_ORDER:
            if text.startswith(term, i):
                out.append(_ZH_TERMS[term])
                i += len(term)
                break
        else:
            return None
    return " ".join(out)


class KeyPhrase:
    """A key phrase that passed the checks: ``key`` (normalized), ``shown`` (as written, for
    the readable text) and whether it was written as a code identifier."""

    __slots__ = ("code", "head", "key", "shown")

    def __init__(self, key: str, shown: str, code: bool) -> None:
        self.key = key
        self.shown = shown
        self.code = code
        self.head = key.split()[-1] if key.split() else key


def key_phrase(phrase: str, *, allow_code: bool = False, loose: bool = False) -> KeyPhrase | None:
    """The normalized key of ``phrase``, or None when it does not name a setting (see the
    module docstring). ``allow_code``: an identifier (``request_timeout``, ``MAX_RETRIES``,
    ``requestTimeout``) is accepted as a key (for ``X = Y`` / ``X: Y`` / "set X to Y").
    ``loose``: the subject of a relation verb ("users sign in through X", "each record is
    written in X"), where the verb carries the meaning: a leading quantifier is dropped, two
    nouns may be joined by "and", and only code and discourse heads are refused."""
    raw = phrase.strip()
    if not raw or len(raw) > 60 or "\n" in raw:
        return None
    ticked = "`" in raw
    s = _MD.sub("", raw).strip().strip("'\u2018\u2019\"").strip()
    if not s or _CODEY.search(s):
        return None
    if CJK.search(s):
        return _zh_phrase(s)
    demo = re.match(r"(?i)(?:this|that|these|those)\s+(\S+)", s)
    if demo and demo.group(1).lower() not in _OWN:
        return None  # "this directive", "that link": a thing of the moment, not a setting
    s = _DET.sub("", s).strip()
    if loose:
        s = _QUANT.sub("", s).strip()
    shown = s
    identifier = bool(re.fullmatch(r"[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+|[a-z]+[A-Z]\w*", s))
    camel = bool(re.search(r"[A-Z][a-z]+[A-Z]", s))  # SplitDateTimeWidget: a class name
    if camel and not allow_code:
        return None
    code = ticked or identifier or camel or ("_" in s)
    if code and not allow_code:
        return None
    if identifier:
        s = _CAMEL.sub(" ", s)
    s = s.replace("_", " ").replace("-", " ") if identifier or "_" in s else s
    s = s.replace("'s ", " ").lower()
    words = s.split()
    if not words or len(words) > 4:
        return None
    joined = loose and len(words) == 3 and words[1] == "and"
    if joined:
        words = [singular(words[0]), "and", words[2]]
    for i, w in enumerate(words):
        if joined and i == 1:
            continue
        if not re.fullmatch(r"[a-z][a-z0-9.\-']*", w) or w in _NOT_IN or w.endswith("'"):
            return None
        if "'" in w:
            return None
    if words[0] in _NOT_FIRST or (words[0] in _LABELS and len(words) == 1):
        return None
    if any(w in _ARTICLE for w in words[1:]):
        return None
    if len(words) == 1 and len(words[0]) < 4 and words[0] not in _SHORT_KEYS:
        return None  # "u", "len": a variable in code, not a setting
    words = [_SHORT.get(w, w) for w in words]
    words[-1] = singular(words[-1])
    head = words[-1]
    qualified_line = loose and head == "line" and len(words) > 1  # "log lines go to X"
    bad = _BAD_HEADS - _LOOSE_OK if loose else _BAD_HEADS
    if (head in bad and not qualified_line) or head.endswith("ly"):
        return None
    if len(words) == 1 and head in _NEEDS_QUALIFIER and not loose:
        return None
    ed = words[-1:] if loose else words  # "cached entries expire": an adjective before the head
    if any(w.endswith("ed") and w not in ("seed", "speed", "feed", "need") for w in ed):
        return None  # "changes applied", "file created": a report, not a setting
    return KeyPhrase(" ".join(words), shown, code)


def _zh_phrase(s: str) -> KeyPhrase | None:
    s = _ZH_DET.sub("", s.replace(" ", ""))
    s = s.removesuffix("的")
    if not s or len(s) > 10 or _ZH_BAD.search(s):
        return None
    if re.search(r"\d", s):
        return None
    if not CJK.search(s):
        return key_phrase(s, allow_code=False)
    # ASCII words mixed with CJK ("API超时"): translate the CJK part where known.
    m = re.fullmatch(r"([A-Za-z][A-Za-z0-9.]*)?([\u3400-\u9fff]+)", s)
    if m is None:
        return None
    lead, rest = m.group(1), m.group(2)
    english = _zh_key(rest)
    if english is not None:
        key = f"{lead.lower()} {english}" if lead else english
        return KeyPhrase(key, s, False)
    if lead:
        return None
    if len(rest) < 2 or len(rest) > 8 or rest.endswith(_ZH_BAD_HEADS):
        return None
    return KeyPhrase(rest, s, False)


def is_setting_head(key: KeyPhrase) -> bool:
    """Whether the key's head noun names a setting ("request timeout", "package manager")."""
    if not key.key.isascii():
        return False
    return key.head in _SETTING_HEADS or key.key in _SETTING_HEADS
