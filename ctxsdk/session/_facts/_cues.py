"""The cue tables of the fact kernel, English and Chinese: the one place they live.

Each table is one compiled regular expression (a sentence is tried against a handful of
them, not dozens). They read one cleaned sentence (``_sentences.clean``) and are used by
``_text``: gates (questions, hypotheticals, filler), instructions (prohibitions, normative
modals, corrections, imperatives), preferences, decisions with their reason, rejected
alternatives and scope, and a session's closing outcome and open work.
"""

from __future__ import annotations

import re

from ._prefilter import prefiltered

__all__ = [
    "ALTERNATIVE",
    "ASK",
    "ASSISTANT_CHOICE",
    "ASSISTANT_NARRATION",
    "CHOICE_VERB",
    "CJK",
    "CONDITION",
    "CORRECTION",
    "DANGLING",
    "DECISION",
    "DECISION_HINT",
    "DECISION_STRONG",
    "DECISION_WEAK",
    "EXISTING",
    "FILLER",
    "HYPOTHETICAL",
    "IMPERATIVE",
    "INTENT",
    "IT_IS",
    "LEAD",
    "LETTER",
    "NEED",
    "NORMATIVE",
    "NOTE",
    "NOT_IT",
    "OPEN_WORK",
    "OUTCOME",
    "PREFERENCE",
    "PROHIBITION",
    "PROJECT_STATEMENT",
    "QUESTION",
    "REASON",
    "REJECTED",
    "REQUEST",
    "RULE_VERB",
    "SCOPE",
    "SCOPE_LEAD",
    "STANDING",
    "STANDING_RULE",
]

_I = re.I
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
LETTER = re.compile(r"[^\W\d_]")

# -- gates -------------------------------------------------------------------------------
# Leading words that carry nothing ("great, but ...", "ok so ...", "also", "好的，").
LEAD = re.compile(
    r"^(?:(?:ok(?:ay)?|great|good|nice|perfect|cool|thanks|thank you|yes|yeah|yep|sure|alright"
    r"|well|so|and|also|now|then|but|however|hmm+|oh|right|ultrathink|think hard|more context"
    r"|additionally|in addition|plus|btw|by the way|first(?:ly)?|finally|lastly|just)\b"
    r"[\s,!.;:–—-]*|(?:next|again|remember|anyway|once again|as i said)\s*,\s*"
    r"|(?:thought|note|update|summary|important|fyi)\s*:\s*"
    r"|(?:step|rule|item|point|task|part|phase|note)\s*#?\d{1,3}[a-z]?\s*[:.)–—-]\s+|(?:好的?|好吧|嗯+|行|可以|那么?|然后|另外|还有|对了|首先|最后|ok)[，,。！!\s]*)+",
    _I,
)
# A sentence that is only politeness or acknowledgement.
FILLER = re.compile(
    r"^(?:ok(?:ay)?|k|thanks?(?: you)?(?: so much| a lot)?|thx|ty|cool|great|nice|good|perfect"
    r"|awesome|excellent|sure|yes|yep|yeah|no|nope|continue|go on|go ahead|proceed|carry on"
    r"|keep going|done|finish(?: please)?|please (?:finish|continue|proceed)|that worked"
    r"|it works|works|lgtm|hi|hello|hey|bye|got it|sounds good|looks good|all done|agreed"
    r"|nice,? that worked|great job|well done|good job|try again|again|retry|next|what next"
    r"|show (?:me )?(?:your |the |all )?(?:tools|commands|help)|help|/?exit|quit"
    r"|嗯+|哦+|好的?|好吧|行|可以|收到|谢谢(?:你|啦)?|多谢|继续|没问题|不错|很好|你好|好了"
    r"|[\s,，.。!！?？~～、…:：;；])*[\s,，.。!！?？~～、…:：;；]*$",
    _I,
)
# Polite requests phrased as questions are requests ("can you add a test?").
REQUEST = re.compile(
    r"^(?:[^?]{0,120}?,\s*)?(?:please\s+)?(?:can|could|would|will)\s+(?:you|we|u)\s+(?:please\s+|also\s+|just\s+)?"
    r"(?!(?:tell|explain|see|confirm|check if|check whether)\b)",
    _I,
)
QUESTION = re.compile(
    r"[?？]\s*[\"')\]]*$"
    r"|^(?:should|shall|could|would|can|do(?!\s+not\b|n'?t\b)|does|did|is|are|was|were|will"
    r"|what|which|how|why|where|when|who|whom|whose|whether|any idea|isn'?t|aren'?t)\b"
    r"|[吗呢][。.！!]?$|是否|要不要|是不是|能不能|可不可以|有没有|为什么|怎么",
    _I,
)
HYPOTHETICAL = re.compile(
    r"^(?:if|suppose|supposing|assuming|imagine|maybe|perhaps|in case|what if|unless|once"
    r"|when|whenever|probably|possibly|i think|i guess|i believe|i wonder|it seems|seems)\b"
    r"|^(?:如果|假如|假设|要是|也许|或许|万一|可能|我觉得|我猜|好像)",
    _I,
)

# A question put as an imperative: "tell me what you know about this", "show me the json
# structure", "explain why it fails" ask for an answer, as "can you tell me …?" does; they
# are no instruction (an ask joined to an action, "… and save it to a file", is read whole).
ASK = re.compile(
    r"^(?:please\s+)?(?:(?:tell|show)\s+(?:me|us)\b|let\s+me\s+know\b"
    r"|(?:explain|describe)\s+(?:to\s+(?:me|us)\s+)?(?:what|how|why|where|which|who|when|whether"
    r"|if)\b|i\s+(?:want|would\s+like|'d\s+like)\s+to\s+(?:know|understand)\b)"
    r"(?!.*\b(?:and|then)\s+(?:then\s+)?(?:save|store|write|put|create|add|update|fix|change"
    r"|make|commit|apply|remove|delete|implement|run)\b)"
    r"|^(?:告诉我|给我看|解释一下|说说)",
    _I,
)

# A sentence cut before its object (the rest was a code block or a list): "… allows me to".
_DANGLING_WORDS = (
    "to be as is are the a an of with for and or like follows at in into from by that "
    "this these following e.g i.e namely such"
).split()
DANGLING = re.compile(rf"\b(?:{'|'.join(map(re.escape, _DANGLING_WORDS))})\s*$", _I)

# -- instructions and preferences --------------------------------------------------------
PROHIBITION = re.compile(
    r"^(?:please\s+)?(?:don'?t|dont|do not|never|avoid|stop|no need to|refrain from"
    r"|there(?:'s| is) no need to|you (?:don'?t|do not|shouldn'?t|should not|must not|mustn'?t)"
    r"|we (?:shouldn'?t|should not|must not|mustn'?t))\b"
    r"|\b(?:must not|mustn'?t|should not|shouldn'?t|shall not|is not allowed|are not allowed"
    r"|not allowed to|important not to|make sure (?:not|you don'?t)|never ever|DO NOT)\b"
    r"|^no\s+(?!(?:problem|worries|idea|doubt|thanks|way|longer|more|one|need|matter|luck"
    r"|change|changes|issue|issues|errors?|difference)\b)[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}"
    r"\s+(?:in|inside|within|during|for|on|at all|anywhere|ever|allowed|please|whatsoever)\b"
    r"|(?:^|[，,；;：:])\s*(?:请|你|我们)?(?:别|不用|不必|无需|勿)"
    r"|不要|别再|不许|禁止|不准|切勿|千万别|不能再",
    _I,
)
CORRECTION = re.compile(
    r"^(?:no|nope|wrong|incorrect|not quite|not really|not that|actually)\b\s*[,.!:;–—-]"
    r"|\bthat'?s (?:not (?:right|correct|what i)|wrong|incorrect)\b|\bi (?:meant|mean)\b"
    r"|\bnot what i (?:asked|meant|wanted|said)\b"
    r"|\b(?:is|are|was)\s*(?:not|n'?t) (?:acceptable|accept?able|ok|okay|allowed|valid|correct"
    r"|right|an option|needed|necessary|what i)\b|\bnot (?:acceptable|valid)\b"
    r"|\b(?:it'?s|is|was|that'?s) (?:a )?bad idea\b|\byou(?:'re| are) (?:wrong|mistaken"
    r"|overcomplicating)|\bdon'?t overcomplicate\b|\bovercomplicat"
    r"|^(?:不对|错了|不是这样|我的意思是|我是说|不行|不可以)|不能接受|搞错了|理解错了"
    # Russian: "нет, …", "не так", "ты зациклился" (you are going in circles), "ты ошибся"
    r"|^(?:нет|не так|неверно|неправильно|не то)\s*[,.!:;–—-]"
    r"|\bты (?:зациклил|ошиб|не понял)\w*|\bэто (?:не так|неправильно|неверно)\b",
    _I,
)
NORMATIVE = re.compile(
    r"\b(?:must|shall|has to|have to|needs? to|is required to|are required to|should(?! (?:work"
    r"|be (?:fine|ok|okay|good|possible|enough|able)|pass|help|do it)\b))\b"
    r"|^(?:please\s+)?(?:make sure|ensure|be sure to|remember (?:to|that)|keep in mind"
    r"|it'?s (?:important|crucial|essential|critical|mandatory|required)|important:)"
    r"|^(?:there is a |there'?s a )?need to\b|(?-i:\bTODO\b)|\b(?:don'?t|do not) forget\b"
    r"|^before you (?:finish|are done|stop|commit|push|wrap up|merge|release)\b"
    r"|^(?:later|afterwards|next time),\s"
    r"|必须|务必|一定要|需要|记得|记住|注意|应该|应当|得要",
    _I,
)
# Standing rules: the instruction holds beyond this turn.
STANDING = re.compile(
    r"\b(?:always|from now on|going forward|in general|by default|every time|each time"
    r"|whenever|in (?:the )?future|for all|never)\b"
    r"|以后|今后|从现在起|从今以后|一律|每次|总是|始终|永远|一直",
    _I,
)
# Imperative verbs a sentence may open with (after "please" and leading filler).
_VERBS = (
    "add|use|run|create|make|keep|put|remove|delete|update|change|write|move|rename|check"
    "|verify|analy[sz]e|review|prepare|design|implement|fix|show|install|start|stop|set|try"
    "|apply|replace|reorder|suggest|focus|follow|read|look|search|find|explain|describe"
    "|refactor|split|merge|extract|convert|document|test|build|deploy|commit|push|pull"
    "|revert|undo|generate|include|exclude|return|handle|skip|ignore|leave|wait|call|pass"
    "|store|save|load|track|send|limit|restrict|allow|enable|disable|configure|upgrade"
    "|downgrade|bump|pin|switch|migrate|simplify|clean|format|lint|sort|rewrite|revise"
    "|improve|optimi[sz]e|reduce|increase|decrease|drop|treat|consider|prefer|mark|open"
    "|close|insert|append|prepend|wrap|rerun|re-run|give|tell|list|print|log|clarify"
    "|comment|investigate|figure out|debug|study|explore|summari[sz]e|finish|complete"
    "|compare|combine|separate|align|extend|reuse|stick|go|do|help|get|bring|ask|choose"
    "|pick|adopt|style|center|pad|shorten|expand|trim|rebase|squash|tag|release|publish"
    "|retry|repeat|resume|assume|mention|note|report|cover|scan|parse|query|fetch|notify"
    "|edit|modify|tweak|adjust|refine|polish|support|address|resolve|touch|change"
    "|work on|take|plan|draft|introduce|cache|mock|stub|rename|port|inline|delegate"
    "|finali[sz]e|rerun|re-run|restart|reset|regenerate|recreate|rebuild|reinstall|send|sync"
)
# Standing rules said as such: the user's preference for every later turn.
STANDING_RULE = re.compile(
    r"(?:^|[,;:!]\s*|\bplease\s+|\b(?:to|should|must|will|'ll|you|we)\s+)always\s+"
    rf"(?:{_VERBS}|be|sign|rotate|tag)\b|\bfrom now on\b"
    r"|\bgoing forward\b|\bby default\b|\bevery time\b|\bremember (?:to|that|this)\b"
    r"|\bin (?:the )?future\b|以后|今后|从现在起|从今以后|一律|每次都|总是|始终|记住|记得",
    _I,
)
PREFERENCE = re.compile(
    r"\bi(?: would|'d)? (?:prefer|rather|like|love|want (?!to\b)|hate|dislike)\b"
    # "I'm looking for a lightweight library" is a taste; "… for suggestions" asks this turn
    r"|\bi(?:'m| am) looking for\b(?!\s+(?:some\s+|any\s+|your\s+)?(?:suggestions?|feedbacks?"
    r"|ideas?|help|advice|input|comments?|thoughts|opinions?|reviews?|answers?)\b)"
    r"|\bprefer(?:ably|red)?\b|\bmy preference\b"
    r"|^(?:please\s+)?be (?:more |very )?(?:concise|brief|terse|short|succinct|explicit"
    r"|specific|careful|consistent|direct|thorough)\b"
    r"|\bkeep (?:it|them|things|the \w+|answers|responses|replies|code|changes)"
    r" (?:short|simple|concise|brief|minimal|small|focused|readable|clean)\b"
    r"|\b(?:for|with) better (?:readability|performance)\b|\bless verbose\b|\bmore concise\b"
    r"|\b(?:is|are) (?:crucial|critical|a priority|top priority|paramount)\b"
    r"|我(?:更|比较)?(?:喜欢|偏好|倾向|习惯|希望)|更喜欢|偏好|简洁|简短|别太长|啰嗦",
    _I,
)
IMPERATIVE = re.compile(
    rf"^(?:please\s+|kindly\s+|pls\s+|let'?s\s+|now\s+)?(?:(?:only|just|also|always|first"
    rf"|then|carefully|quickly|simply|instead)\s+)?(?:{_VERBS})\b"
    r"(?!\s*(?:is|are|was|were|has|have|had|of|'s|=|:|-|—)\b)(?!\s*$)(?![:=])"
    r"(?![/.\\]\S)"  # "test/support/", "build.gradle": a path or a file, not a verb
    r"(?!\s+(?:looks?|seems?|sounds?|works?|worked|feels?|reads?|makes sense|went|goes"
    r"|needs|did|does|failed|passed|passes|fails|stays|says|said)\b)"
    r"|^(?:please|let'?s)\b"
    r"|^i (?:want|need|would like|'d like) (?:you )?to\b|^(?:i want|we need) (?!to\b)"
    r"|^help me\b"
    r"|^(?:请(?!求)|帮我|帮忙|麻烦|给我|你去|去)"  # 请求 is "request", a noun
    r"|^(?:用|使用|改|把|加|添加|删|删除|去掉|运行|跑|创建|新建|写|修|修复|更新|换|换成|改成|保留"
    r"|保持|检查|确保|实现|重构|移动|重命名|安装|提交|推送|生成|补充|统一|先|再|分析|看看|查看)"
    # Russian imperatives, after "пожалуйста" and "сам" / "сначала" / "теперь"
    r"|^(?:пожалуйста,?\s+)?(?:(?:сам|сама|сначала|теперь|только|ещё|еще)\s+)?(?:создай|сделай"
    r"|изучи|почитай|прочитай|запроси|проверь|исправь|добавь|удали|убери|запусти|обнови"
    r"|используй|перепиши|посмотри|найди|объясни|ответь|отвечай|напиши|пиши|измени"
    r"|переименуй|установи|сохрани|покажи|продолжи|верни|оставь)(?!\w)(?!\s*$)",
    _I,
)
# Imperatives that state how work should be done (a rule), not only what to do next.
RULE_VERB = re.compile(
    r"^(?:please\s+|let'?s\s+)?(?:use|keep|put|avoid|prefer|follow|ensure|stick|store|track"
    r"|reuse|extend|limit|restrict|pin|treat|assume|only|leave|preserve|wrap|return|pass"
    r"|make (?:sure|it|them|all|each|every)|do it)\b"
    r"|\b(?:only|instead|same|without|rather|unless|separate|single|existing|always|never"
    r"|every time|each time|consistently)\b"
    r"|^(?:用|使用|统一|保留|保持|只|先)",
    _I,
)
SCOPE = re.compile(
    r"\b(?:in|for|within|across|inside|under|to)\s+((?:the |this |that |our |all |every |each "
    r"|any )?(?:tests?|test files?|unit tests|(?:this|the|our|each|every|all) (?:repo|repository"
    r"|project|codebase|session|file|module|package|folder|directory|service|api|backend"
    r"|frontend|ui|app|readme|docs?|documentation|changelog)s?|production|prod|ci"
    r"|markdown(?: files)?"
    r"|python(?: files| code)?|typescript|commit messages?|prs?|pull requests?"
    r"|[\w./\\-]+\.(?:py|ts|tsx|js|jsx|md|json|jsonc|ya?ml|toml|html|css|go|rs|java|rb|sh)"
    r"|(?:src|lib|tests?|docs?|specs?|packages)/[\w./-]*))\b"
    r"|^(?:only|just) (?:edit|change|touch|modify|update|use)\s+(\S+)"
    r"|在(测试|这个仓库|本仓库|这个项目|本项目|项目|代码库|生产环境|文档)(?:里|中|上)?",
    _I,
)

# A condition before the rule: "if /clear is found - finalize the session", "when a test
# fails, rerun it once". Its consequent (after a comma, a dash or "then") is what is read.
CONDITION = re.compile(
    r"^(?:(?:if|when|whenever|once|in case)\b|每当|如果|要是|当)(?P<cond>[^,;，]{2,160}?)"
    r"(?:\s*[,，]\s*(?:then\s+)?|\s+[-–—]+\s+|\s+then\s+)(?P<rule>\S.*)$",
    _I,
)
# A scope before an imperative: "For numbered lists, pad the marker …".
SCOPE_LEAD = re.compile(r"^(?:for|in|inside|within|across|on)\s+[^,]{2,50},\s+(?=[a-z])", _I)
# What the user states about the project, with no cue word of an instruction: a constraint
# ("the issue is that several processes can run from different tabs"), what is outside its
# control ("we don't control the claude code process"), how a part differs ("gemini has a
# different storage for prompts"), what is absent ("there is no tracking of failures").
PROJECT_STATEMENT = re.compile(
    r"\b(?:the|one|main|real|actual|only) (?:issue|problem|catch|constraint|limitation|thing"
    r"|difficulty|complication) (?:here )?is that\b"
    r"|\b(?:we|i) (?:don'?t|do not|can'?t|cannot) (?:control|own|maintain|modify|change|touch)"
    r" (?:the |its |their |this |that )?\w"
    r"|\b(?:it'?s|it is|is) (?:a )?(?:3rd|third)[- ]party\b"
    r"|\b(?:has|have|uses|use) (?:a |an )?(?:different|separate|its own|their own) \w"
    r"|^there (?:is|are|'s) no\s+(?!need\b|way\b|problem\b|rush\b|hurry\b)\w"
    r"|(?:的)?问题(?:在于|是)|我们(?:无法|不能)控制|是第三方",
    _I,
)
# The user pointing at code that already does it ("there is existing logic for scanning
# history", "there's already a helper for that"): a fact about the code (``_statements``).
EXISTING = re.compile(
    r"^(?:but\s+)?there(?: is|'s| are)(?: already)? (?:an? )?(?:existing|already existing"
    r"|already an?|already)\s+\w"
    r"|\b(?:we|you) already have (?:an? |the )?(?:\w+ )?(?:logic|code|function|helper|util"
    r"|utility|method|class|module|script|implementation|endpoint|component)\b"
    r"|已经有|已有(?:的)?(?:逻辑|代码|函数|方法|实现)",
    _I,
)
# Context offered, not a rule: "keep in mind that the new file is in the same folder",
# "remember this fact for later: the codeword is X"; what follows the lead is what holds.
NOTE = re.compile(
    r"^(?:please\s+)?(?:remember|note|keep in mind|bear in mind)"
    r"(?:\s+that\b|\s+this(?:\s+fact)?(?:\s+for later)?\s*:)\s*",
    _I,
)
# An impersonal need: "there is a need to track the synced id", "there is no need to track
# the old session", "need to - periodically scan it"; ``what`` is what is (not) needed.
NEED = re.compile(
    r"^(?:there(?:\s+is|'s|\s+will\s+be)\s+(?:a|(?P<no>no))\s+)?need\s+to\b\s*(?:[-–—:]\s*)?"
    r"(?P<what>\S.*)$",
    _I,
)
# "it's not a jsonl file." then "it's a json file with …": a correction in two sentences.
NOT_IT = re.compile(
    r"^(?:no[,.]?\s+)?(?:it'?s|i[a-z]'s|[a-z]t's|it is|this is|that'?s|that is|they'?re"
    r"|they are) not"
    r" (?:a |an |the )?[\w.`'-]+(?:\s[\w.`'-]+){0,3}\s*[.!]?$",
    _I,
)
IT_IS = re.compile(r"^(?:but\s+)?(?:it'?s|it is|this is|that'?s|they'?re|they are)\s+\S", _I)

# -- decisions ---------------------------------------------------------------------------
DECISION_STRONG = re.compile(
    r"\b(?:we|i)(?:'ve| have)? decided\b|\bdecided (?:to|on|that|against)\b"
    r"|\b(?:the |our |my )?decision (?:is|was) \b|\b(?:decision|chosen (?:approach|solution|option"
    r"|design)|final (?:decision|approach|design|choice)|selected approach)\s*:"
    r"|\b(?:let'?s|let us|we(?:'ll| will| are going to|'re going to| should)?|i(?:'ll| will)?)"
    r" (?:go|going|went) with\b|\blet'?s (?:use|stick with|keep|switch to|adopt|choose|pick"
    r"|settle on)\b|\b(?:chose|chosen|opted (?:for|to)|settled on|sticking with|went with"
    r"|going with|go with (?:option|approach|plan|solution|the|a|an|\w+ (?:approach|option)))\b"
    r"|\bpostpone|\bdefer(?:red)? (?:until|to)\b|\bput (?:it |this |that )?on hold\b"
    r"|决定|选择了|选定|选用|采用|改用|就用|不要改成|先别动|下周再|定了|敲定|方案\s*[A-Z0-9一二三四五]",
    _I,
)
ALTERNATIVE = re.compile(r"\b(?:instead of|rather than|in favou?r of)\b|而不是", _I)
DECISION = re.compile(
    DECISION_STRONG.pattern
    + "|"
    + ALTERNATIVE.pattern
    + r"|\bwe(?:'ll| will| are going to|'re going to) (?:use|keep|adopt|switch to|stick with)\b",
    _I,
)
# Words one of the decision cues needs (a cheap test on the lowercased sentence first).
DECISION_HINT = re.compile(
    r"decid|decision|chose|opted|settled|sticking|went with|go with|going with|let'?s|let us"
    r"|instead of|rather than|in favou?r|we'll|we will|going to|switch|migrat|mov|prefer"
    r"|i'll|i will|we should|postpone|defer|on hold"
    r"|决定|选|采用|改用|就用|而不是|不要改成|先别动|下周再|定了|敲定|方案|用"
)
# Weaker: a choice only when the user says it, or with a reason or an alternative.
DECISION_WEAK = re.compile(
    r"\b(?:i(?:'ll| will)|we should|let'?s) (?:use|keep|switch to|store|track|set|extend|put)\b"
    r"|\b(?:switch(?:ed|ing)?|migrat(?:e|ed|ing)|mov(?:e|ed|ing)) (?:from \S+ )?to\b"
    r"|\bprefer \S+(?: \S+)? over\b|(?:^|[，,])\s*(?:用|使用)\S{1,20}(?:吧|就行|就好)",
    _I,
)
# A choice the assistant commits to (with "instead of"), not a description of code.
CHOICE_VERB = re.compile(
    r"\b(?:use|using|keep|store|switch|chose|choose|track|extend|leverage|rely|adopt|replace"
    r"|implement|add|go with|went with|stick|prefer|opt|set|iterate|pass|call|return|yield"
    r"|parse|read|write|make|create|update|move|put|compute|check|raise|handle|skip)\b"
    r"|用|改|采用|选",
    _I,
)
ASSISTANT_NARRATION = re.compile(
    r"^(?:let me|now,? let me|now i|i'?ll (?:start|begin|first|now|check|look|read|run|search"
    r"|examine|open|investigate|explore|create an? (?:test|script|reproduc)|verify|try|see"
    r"|also|help|update the test)|i (?:will|need to|should|can|am going to|'m going to|want to)"
    r" (?:check|look|read|run|search|examine|open|investigate|explore|find|see|verify|try"
    r"|understand|start)|first,? (?:let|i)|next,? (?:let|i)|i see\b|i notice|i found|looking"
    r" at|perfect|great|good|excellent|okay|ok|you'?re (?:absolutely )?right|thought)\b"
    r"|\blet me\b|\b(?:consider|considering|maybe|might|perhaps|could)\b"
    r"|^let'?s (?:run|open|search|look|check|see|find|create|start|try|first|now|begin|examine"
    r"|scroll|navigate|view|verify|reproduce|edit|goto|inspect|test|take|make|also)\b"
    r"|^let'?s use .{0,80}?\bto (?:see|find|check|look|locate|open|search|view|inspect|verify"
    r"|reproduce|confirm|test|run|understand|get|make)\b",
    _I,
)
# The assistant stating its choice of technique ("I'll use WAL mode", "I'll store sessions as
# JSONL because …", "Recommended approach: …"), not a tool it runs to look at something ("I'll
# use grep to find …", "I'll use the editor").
_INSPECT = (
    r"see|find|check|look|locate|open|search|view|inspect|verify|reproduce|confirm|test|run"
    r"|understand|get|examine|debug|explore|print|read|list|navigate|investigate|show|display"
    r"|figure|make sure|compare|fix|edit|create|apply|modify|update|replace|write|call|make"
)
ASSISTANT_CHOICE = re.compile(
    r"^(?:(?:so|then|instead|here),?\s+)?(?:i'?ll|i will|i'm going to|i am going to|we'?ll|we will"
    r"|i(?:'ve| have) decided to|i(?:'d| would) (?:recommend|suggest) (?:using|we use|you use)"
    r"|my recommendation is to)\s+(?:instead\s+)?"
    r"(?:use|store|persist|keep|represent|model|save|serialize|encode|cache|track|go with"
    r"|stick with|adopt|switch to|implement it (?:as|with|using))\s+(?!\w+ing\b)"
    r"(?!(?:the|a|an|this|that|its|their)?\s*(?:[\w`'-]+\s+){0,2}(?:tool|command|editor"
    r"|function|script|search|approach below|same approach)\b)"
    r"(?!(?:`?(?:grep|sed|ed|vim?|nano|find|bash|cat|ls|rg|awk|python3?|str_replace\w*|edit|view"
    r"|create|git|pip|npm)`?)\b)(?!\S+\s+-{1,2}\w)"
    r"(?!.{0,60}\b(?:provided|given|shown|you|or just|or simply|mentioned|described)\b)"
    rf"(?!.{{0,60}}\bto (?:{_INSPECT})\b)"
    r"|^(?:recommended|proposed|chosen|preferred|suggested|my) (?:approach|solution|design"
    r"|option|fix|format|storage|choice)\s*[:：]\s*\S"
    r"|^(?:recommendation|decision)\s*[:：]\s*\S",
    _I,
)
REASON = re.compile(
    r"(?:\b(?:because(?: of)?|since(?!\s*(?:\d|v\d|version|then|when|last|yesterday|the start"
    r"|the beginning))|so that|given that|due to|in order to|to avoid|to prevent|to ensure"
    r"|as (?:it|this|that|they|we) (?:is|are|was|were|will|would|can|does|do|has|have)\b)"
    r"|因为|由于|为了|以便|以免|否则)\s*(?P<why>.+)$",
    _I,
)
REJECTED = re.compile(
    r"\b(?:instead of|rather than)\s+(?:using\s+|use\s+)?(?P<a>[^,.;:()]{1,60}?)"
    r"(?=\s*(?:[,.;:()]|\bfor\b|\bbecause\b|\bsince\b|\bso\b|$))"
    r"|\bprefer\w*\s+[^,.;]{1,40}?\s+over\s+(?P<g>[^,.;:()]{1,40}?)(?=\s*(?:[,.;:()]|\bfor\b|$))"
    r"|,\s*(?:and\s+)?not\s+(?:using\s+|use\s+)?(?P<b>[^,.;:()]{1,60})$"
    r"|\bswitch(?:ed|ing)? (?:\S+ )?from\s+(?P<c>\S+(?:\s\S+)?)\s+to\b"
    r"|(?:^|(?<=[,;]))\s*(?P<d>[\w .#/-]{1,40}?)\s+(?:is|are)\s*(?:not|n'?t) (?:acceptable"
    r"|accept?able|an option"
    r"|valid|ok|okay)"
    r"|\b(?:don'?t|do not|never|stop|no longer) us(?:e|ing)\s+(?P<e>[\w.@/+-]{1,40})"
    r"|(?:而不是|不用|不要用|别用|不再用|弃用)\s*(?P<f>[^，,。；;！!、\s]{1,30})",
    _I,
)

# -- closing: outcome and open work -------------------------------------------------------
OUTCOME = re.compile(
    r"^(?:i(?:'ve| have)|we(?:'ve| have))\s+(?:now\s+|successfully\s+|also\s+|just\s+)?"
    r"(?:\w+ed|made|written|built|done|run|put|set|found|taken|got|kept|split|rewritten)\b"
    r"|^(?:implemented|fixed|added|created|updated|removed|changed|resolved|refactored|wrote"
    r"|moved|renamed|deleted|replaced|modified|completed|finished|extended|converted|migrated"
    r"|documented|verified|tested|cleaned|introduced|simplified)\b"
    r"|\b(?:has|have) been (?:successfully )?(?:\w+ed|made|written|built|done|run|set|split)\b"
    r"|\b(?:all\s+)?\d+\s+(?:tests?|specs?|checks?|cases?)\s+(?:now\s+)?(?:pass|passed|passing"
    r"|succeeded|green)\b|\ball (?:the )?(?:\w+ )?tests? (?:now )?pass"
    r"|\btests? (?:now )?pass(?:es|ed)?\b"
    r"|\b(?:verification|build|tests?|lint|type ?check|ci|checks?)"
    r" (?:passed|succeeded|(?:is|are) green)"
    r"|\b(?:was|were|been|is|are|\w+ed|ran|built|done) successfully\b|\bsuccessfully \w+ed\b"
    r"|\bis now (?:running|working|fixed|available|live|deployed|in place"
    r"|complete|done)\b|\ball done\b|\b(?:the |this |my )?(?:fix|change|patch|diff|commit)"
    r" (?:adds|fixes|changes|ensures|makes|handles|allows|prevents|resolves|removes|updates)\b"
    r"|\bnow (?:works|returns|handles|passes|correctly)\b"
    r"|完成了|已(?:经)?(?:完成|修复|添加|创建|更新|删除|实现|修改|解决|提交|推送|通过)|全部通过|测试通过|搞定|修好了",
    _I,
)
# The agent announcing what it is about to do ("I'll do one last check", "I will now run"):
# a next step, not open work.
INTENT = re.compile(r"^(?:i'?ll|i will|i am going to|i'm going to|now i'?ll|next,? i'?ll)\b", _I)
OPEN_WORK = re.compile(
    r"(?-i:\bTODO\b)|\b(?:remaining|remains|next steps?|not yet|still (?:need|needs|to|fail|fails"
    r"|failing|missing|open|pending|broken)|left to do|follow[- ]ups?|pending|outstanding"
    r"|(?:i|we) (?:haven'?t|have not|couldn'?t|could not|was unable|were unable|did not|didn'?t)\b"
    r"|unable to|you (?:may|might|will|'ll|would) (?:also |still )?need to|needs? to be (?:done"
    r"|addressed|fixed|implemented|tested)|known (?:issues?|limitations?)|not (?:implemented"
    r"|supported|covered|handled|tested) yet|future work|to be done|not committed)\b"
    r"|还需要|待办|尚未|还没|未完成|下一步|后续|遗留|仍需|待完成",
    _I,
)


# the tables most sentences hold no word of: a test of their literal words first
# (``_prefilter``: the same answers)
STANDING_RULE = prefiltered(STANDING_RULE)
PROJECT_STATEMENT = prefiltered(PROJECT_STATEMENT)
DECISION_WEAK = prefiltered(DECISION_WEAK)
DECISION_STRONG = prefiltered(DECISION_STRONG)
NORMATIVE = prefiltered(NORMATIVE)
DECISION = prefiltered(DECISION)
ALTERNATIVE = prefiltered(ALTERNATIVE)
EXISTING = prefiltered(EXISTING)
NEED = prefiltered(NEED)
NOTE = prefiltered(NOTE)
OUTCOME = prefiltered(OUTCOME)
PREFERENCE = prefiltered(PREFERENCE)
STANDING = prefiltered(STANDING)
OPEN_WORK = prefiltered(OPEN_WORK)
PROHIBITION = prefiltered(PROHIBITION)
REASON = prefiltered(REASON)
CORRECTION = prefiltered(CORRECTION, by_branch=True)  # "no", "is", "are" pass most sentences


class _AtEnd:
    """``DANGLING`` searched only where a match can start. Every match is one of its words
    and then only whitespace to the end, so it starts at most the longest word's length
    (``_LONGEST``) before the text's last character that is not whitespace (``\\s`` and
    ``str.rstrip`` strip the same characters); ``\\b`` still sees the character before the
    window. A sentence ends in none of the words most of the time, and a search from its
    first character tried the words at every word boundary. Other calls go to the pattern."""

    __slots__ = ("_pattern",)

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self._pattern = pattern

    def search(self, text: str, *args: int) -> re.Match[str] | None:
        if args:
            return self._pattern.search(text, *args)
        return self._pattern.search(text, max(0, len(text.rstrip()) - _LONGEST))

    def __getattr__(self, name: str) -> object:
        return getattr(self._pattern, name)


_LONGEST = max(map(len, _DANGLING_WORDS))
DANGLING = _AtEnd(DANGLING)  # type: ignore[assignment]
