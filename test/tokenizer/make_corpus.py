#!/usr/bin/env python3
"""Writes test/tokenizer/corpus.json: the strings our tokenizers are compared on
with Hugging Face's JavaScript implementation (test/tokenizer/reference.mjs).

Deterministic: hand-written groups, lines of this repository's own source at
the commit that generated it (copied into the corpus, so the corpus does not
change when the code does), and seeded random mixtures of characters that
Unicode 14 assigns (Python's unicodedata and Debian 12's PCRE2 both use 14.0;
a character assigned later may be classified differently by newer tables).

    python3 test/tokenizer/make_corpus.py > test/tokenizer/corpus.json
"""
import json
import os
import random
import sys
import unicodedata

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LANGUAGES = [
    "The quick brown fox jumps over the lazy dog.",
    "It's 5 o'clock somewhere, isn't it? We'd better go; they'll wait.",
    "Le cœur a ses raisons que la raison ne connaît point.",
    "Où est la bibliothèque ? À gauche, près de l'église.",
    "Der schnelle braune Fuchs springt über den faulen Hund.",
    "Straßenbahnhaltestelle und Donaudampfschifffahrtsgesellschaftskapitän.",
    "El niño comió piñata en el año pasado. ¿Qué tal? ¡Muy bien!",
    "A língua portuguesa é falada em São Paulo e em Lisboa.",
    "La vita è bella, però è anche difficile.",
    "Het is een mooie dag in Amsterdam, nietwaar?",
    "Zażółć gęślą jaźń. Pchnąć w tę łódź jeża.",
    "Příliš žluťoučký kůň úpěl ďábelské ódy.",
    "Árvíztűrő tükörfúrógép.",
    "Şehirde çok güzel bir gün; İstanbul'da ığdır.",
    "Δεν υπάρχει ελπίδα χωρίς φόβο. Ἐν ἀρχῇ ἦν ὁ λόγος.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Україна — це Європа. Їжак їсть ґаздівські яблука.",
    "Това е българският език: ѝ, ъ, щ.",
    "Ово је српски ћирилицом; ovo je srpski latinicom: đ, ž, ć.",
    "Ես սիրում եմ Հայաստանը։",
    "გამარჯობა, როგორ ხარ?",
    "שלום עולם! זה טקסט בעברית עם ניקוד: שָׁלוֹם.",
    "مرحبا بالعالم. هذه جملة عربية مع تشكيل: العَرَبِيَّة.",
    "سلام دنیا، این یک جمله فارسی است.",
    "یہ اردو زبان کا ایک جملہ ہے۔",
    "नमस्ते दुनिया! यह हिंदी का वाक्य है।",
    "আমি বাংলায় গান গাই।",
    "ਪੰਜਾਬੀ ਭਾਸ਼ਾ ਗੁਰਮੁਖੀ ਵਿੱਚ ਲਿਖੀ ਜਾਂਦੀ ਹੈ।",
    "ગુજરાતી ભાષા સુંદર છે.",
    "தமிழ் ஒரு பழமையான மொழி.",
    "తెలుగు భాష చాలా మధురమైనది.",
    "ಕನ್ನಡ ಭಾಷೆ ಕರ್ನಾಟಕದಲ್ಲಿ ಮಾತನಾಡುತ್ತಾರೆ.",
    "മലയാളം കേരളത്തിലെ ഭാഷയാണ്.",
    "සිංහල භාෂාව ශ්‍රී ලංකාවේ භාවිතා වේ.",
    "ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ",
    "ພາສາລາວເປັນພາສາທີ່ສວຍງາມ",
    "ភាសាខ្មែរ​ជា​ភាសា​ផ្លូវការ",
    "မြန်မာဘာသာစကား",
    "བོད་ཀྱི་སྐད་ཡིག",
    "ᠮᠣᠩᠭᠣᠯ ᠪᠢᠴᠢᠭ",
    "我们今天去公园散步，天气很好。",
    "這是繁體中文的句子，包含「引號」和標點。",
    "日本語の文章です。カタカナとひらがな、そして漢字。",
    "ｶﾀｶﾅ半角とＦＵＬＬＷＩＤＴＨ英数字１２３。",
    "한국어 문장입니다. 안녕하세요!",
    "Tiếng Việt có nhiều dấu: ắ, ằ, ẳ, ẵ, ặ, ệ, ự.",
    "Bahasa Indonesia sangat mudah dipelajari.",
    "Wikang Tagalog: Magandang umaga po!",
    "Kiswahili ni lugha ya Afrika Mashariki.",
    "Yorùbá: Ẹ kú àárọ̀, ṣé dáadáa ni?",
    "ኢትዮጵያ ውብ አገር ናት።",
    "ᏣᎳᎩ ᎦᏬᏂᎯᏍᏗ",
    "ᐃᓄᒃᑎᑐᑦ ᑎᑎᕋᐅᓯᖅ",
    "Íslenska: Þú ert ðæmi um þolinmæði.",
    "Føroyskt og dansk: æ, ø, å.",
    "Suomen kieli: Hyvää päivää! Äiti ja isä.",
    "Eesti keel: Õun ja äädikas.",
    "Latviešu valoda: ķēķis, ģērbties, ņemt.",
    "Lietuvių kalba: ąžuolas, ėglė, ų.",
    "Gaeilge: Dia dhuit, conas atá tú?",
    "Cymraeg: Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch.",
    "Euskara: Kaixo, zer moduz zaude?",
    "Català: L'àvia va a la plaça amb el nét.",
    "Malti: Il-ħobż u l-ilma.",
    "Esperanto: Eĥoŝanĝo ĉiuĵaŭde.",
    "Lingua Latina: Gallia est omnis divisa in partes tres.",
    "ᚠᚢᚦᚨᚱᚲ runes and 𐌰𐌱𐌲 Gothic and 𓀀𓁐 hieroglyphs.",
    "Ελληνικά και English mixed με 中文 und Deutsch.",
    "Mixed: Hello世界, Привет мир, مرحبا world, שלום 123.",
]

EMOJI = [
    "😀", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🧑🏿‍🚀", "👩🏻‍❤️‍💋‍👨🏼", "🇫🇷🇩🇪🇯🇵", "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "1️⃣2️⃣#️⃣*️⃣",
    "❤️ vs ❤︎", "☺️☺", "🤷‍♀️🤷‍♂️", "🐈‍⬛", "🫠🫣🫡", "I ❤️ NY 🗽!", "Emoji at end 🎉", "🎉 at start",
    "Words😀between😀emoji", "🙂🙃🙂🙃🙂🙃🙂🙃", "👋 Hello, 🌍!", "🔥🔥🔥 hot 🔥🔥🔥", "😂😂😂😂😂😂😂😂😂😂",
    "©®™ ✓✔✗✘ ★☆ ♠♣♥♦", "→ ← ↑ ↓ ⇒ ⇔ ∀ ∃ ∅ ∞ ≠ ≤ ≥", "🧬🧪🔬 science", "🚀 launch at 12:00 🕛",
]

NUMBERS = [
    "0", "7", "42", "123", "1234", "12345", "123456", "1234567", "12345678901234567890",
    "3.14159", "-273.15", "+1 (555) 123-4567", "1,000,000", "1.000.000,50", "1 000 000", "6.022e23",
    "0xDEADBEEF", "0b1010", "2024-12-04", "23:59:59.999", "12/25/2025", "$19.99", "€5,50", "£100", "¥1000",
    "50%", "3/4", "1st 2nd 3rd 4th", "v1.2.3-rc.1", "192.168.0.1", "::1", "ISBN 978-3-16-148410-0",
    "٠١٢٣٤٥٦٧٨٩", "०१२३४५६७८९", "０１２３４５６７８９", "¹²³⁴⁵", "½ ¼ ¾ ⅓", "Ⅰ Ⅱ Ⅲ Ⅳ Ⅻ", "①②③", "𝟘𝟙𝟚𝟛",
    "π≈3.14", "x² + y² = z²", "10^9+7", "1e-9", "NaN Infinity -0", "007", "000000", "9" * 50,
    "3rd-party 4x4 2x speed", "Room 101B, floor 3A", "année 2023–2024", "a1b2c3d4e5", "12abc34def56",
]

CODE_EXTRA = [
    "def f(x):\n    return x * 2\n",
    "int main() { return 0; }",
    "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}",
    "const x = (a, b) => a ?? b;",
    "SELECT * FROM users WHERE id = 42;",
    "<div class=\"a\">Hello</div>",
    "{\"key\": [1, 2, {\"nested\": null}], \"ok\": true}",
    "#include <stdio.h>\n#define MAX(a,b) ((a)>(b)?(a):(b))",
    "fn main() { println!(\"{}\", 1 + 1); }",
    "if x != nil { return err }",
    "$ ls -la | grep '^d' && echo done",
    "a = [i**2 for i in range(10) if i % 2 == 0]",
    "    indented with four spaces",
    "\tindented with a tab",
    "x=1;y=2;z=x+y",
    "/* comment */ // line comment",
    "https://example.com/path?query=1&other=two#frag",
    "user@example.com",
    "C:\\Users\\name\\Documents\\file.txt",
    "\\n \\t \\\\ \\\" escapes in text",
    "regex: ^[a-z]+(?:\\d{2,3})?$",
    "`code` and ```blocks```",
    "**bold** _italic_ ~~strike~~",
    "| a | b |\n|---|---|\n| 1 | 2 |",
]

WHITESPACE = [
    " ", "  ", "   ", "    ", " " * 17, "\t", "\t\t", "\n", "\n\n", "\n\n\n", "\r\n", "\r\n\r\n", "\r",
    " \n", "\n ", " \t \n ", "a  b", "a   b", "a\tb", "a\t\tb", "a\nb", "a\n\nb", "a \n b", "a\r\nb",
    " leading", "trailing ", "  both  ", "\tTab start", "end tab\t", "line1\nline2\nline3",
    "para one.\n\npara two.", "a\u00a0b", "a\u3000b", "a\u2009b", "a\u200bb", "a\u2028b", "a\u2029b",
    "a\u0085b", "a\u000bb", "a\u000cb", "a\u1680b", "a\u202fb", "a\u205fb", "a\ufeffb", "\ufeffBOM start",
    "   \n\n   \n", "x \t\n\r y", "word     word", "end with spaces     ", "\n\nstarts with newlines",
    "mixed  \u00a0 \u3000  spaces", " ?", "  !", " \n\n ,",
]

CONTRACTIONS = [
    "I'm", "I'M", "you're", "YOU'RE", "we've", "WE'VE", "he'll", "HE'LL", "she'd", "SHE'D", "it's", "IT'S",
    "don't", "DON'T", "can't", "won't", "shouldn't've", "y'all", "o'clock", "rock 'n' roll",
    "I’m curly", "don’t curly", "'s alone", "'tis the season", "James's book", "the dogs' bones",
    "I'ma go", "'re 've 'll 'd 'm 's 't", "L'amour, c'est l'été", "dell'arte", "Ma'am", "ne'er-do-well",
    "Rock'n'Roll", "He said 'hello' and 'bye'", "'quoted'", "''double single''", "'", "''", "'''",
    "It's, isn't it ?", "Hello , world !", "a . b", "a ' b", "yes ? no !",
]

SPECIALS = [
    "<|begin_of_text|>Hello", "Hello<|end_of_text|>", "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
    "<|eot_id|><|eot_id|>", "text <|eot_id|> text", "<|begin_of_text|><|begin_of_text|>",
    "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>",
    "<|im_start|><|im_end|>", "<|endoftext|>", "a<|endoftext|>b", "<|im_start", "im_start|>", "<|im_sta rt|>",
    "<s>Hello</s>", "<s> <s> </s>", "<unk>", "a<unk>b", "< s >", "<s", "s>", "<|eot_id", "eot_id|>",
    "<|reserved_special_token_5|>", "<think>reasoning</think>answer", "<tool_call>{}</tool_call>",
    "<|vision_start|><|image_pad|><|vision_end|>", "<|fim_prefix|>def<|fim_suffix|>x<|fim_middle|>",
    "[INST] question [/INST]", "<<SYS>>\nsystem\n<</SYS>>", "<|user|>\nhello</s>",
    "Hello <|eot_id|>world", "Hello<|eot_id|> world", " <|im_end|> ", "\n<|im_end|>\n",
]

UNUSUAL = [
    "e\u0301", "\u00e9", "cafe\u0301 vs caf\u00e9", "A\u030a vs \u00c5 vs \u212b", "\u1100\u1161\u11a8", "\uac01",
    "n\u0303", "Z\u0351\u0308\u034c\u0347\u0318a\u0305\u0353l\u0350\u0331g\u0314\u0324o\u0346\u033a",
    "\u200b", "\u200c\u200d", "\u200e\u200f", "\u202a\u202b\u202c\u202d\u202e", "\u2066\u2067\u2068\u2069",
    "\ufeff", "\ufffd", "\ufffe", "\uffff", "\ufdd0\ufdef", "\U0001fffe", "\U0010ffff", "\ue000\uf8ff",
    "\U000f0000", "\ufe0f", "a\ufe00", "\U000e0041\U000e0042", "\x00", "a\x00b", "\x01\x02\x03\x1f",
    "\x7f", "\x1b[31mred\x1b[0m", "\x08\x07", "\U0001d400\U0001d401\U0001d7ce", "\U0001f600\U0001f601",
    "\U00020000\U0002a6d6", "\u3400\u4dbf", "\ufb01 \ufb02 ligatures", "\u2126 \u03a9", "\u00b5 \u03bc",
    "\u0130\u0131", "\u1e9e\u00df", "\u01c4\u01c5\u01c6", "\u0345", "\u0f00\u0f73", "\u2460\u2469",
    "\uff21\uff22\uff23", "\u3131\u314f", "\u0e01\u0e34\u0e4a", "\u0915\u094d\u0937", "\u093f\u0915",
    "\u05d0\u05b7", "\u0627\u0644\u0644\u0647", "\ufdfa", "\u2028", "\u2029", "\u0085", "\u00ad soft",
    "\u034f", "\u180e", "\u2060", "\u115f\u1160", "\u3164", "\uffa0", "\u0600\u0601", "\u070f",
    "\U0001f3fb", "\U0001f1e6", "\U0001f1e6\U0001f1e8\U0001f1e6", "\u20e3", "\u0023\u20e3",
    "\u0300 starts with a combining mark", "ends with a combining mark a\u0300", "\u0300\u0301\u0302\u0303",
    "\u2eff\u2fd6", "\u31ef", "\U0001b000\U0001b001", "\U00016fe4", "\u1dfa",
    "\u00e0\u00e8\u00ec\u00f2\u00f9 NFC", "a\u0300e\u0300i\u0300o\u0300u\u0300 NFD",
    "\u1e9b\u0323", "\u1e0b\u0323", "\u0071\u0307\u0323", "\ufb2c", "\u0344", "\u0f77",
    "\u00c7\u0327", "\u1fbf\u0301", "\u2000\u2001", "\u3099\u309a", "\u304b\u3099", "\u304c",
    "\u0386\u0388\u038a", "\u03d3\u03d4", "\u2126\u212a\u212b", "K\u212a k", "\u017f s \u017f't",
    "I\u0307", "\u1f00\u0345", "\u0ddd\u0dde", "\u0b48\u0b4b", "\u0bca\u0bcb", "\u1b06\u1b3b",
]

LONG = [
    "a" * 1000,
    "supercalifragilisticexpialidocious" * 30,
    "Rindfleischetikettierungsüberwachungsaufgabenübertragungsgesetz" * 5,
    "1234567890" * 60,
    "https://example.com/" + "very/long/path/" * 40 + "?q=" + "x" * 200,
    "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=" * 20,
    "😀" * 300,
    "漢字" * 300,
    "ab" * 700,
    " " * 500 + "x",
    "\n" * 300,
    "-" * 400,
    "=" * 80 + "\n" + "=" * 80,
    "Ж" * 600,
    "ﷺ" * 100,
    "x" * 5000,
    "pneumonoultramicroscopicsilicovolcanoconiosis",
    "Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch" * 10,
    "._" * 400,
    "a\u0301" * 300,
]

# Ranges to draw random characters from: scripts, symbols, punctuation.
RANGES = [
    (0x20, 0x7E), (0xA0, 0x24F), (0x370, 0x3FF), (0x400, 0x4FF), (0x530, 0x58F), (0x590, 0x5FF),
    (0x600, 0x6FF), (0x900, 0x97F), (0x980, 0x9FF), (0xE00, 0xE7F), (0x10A0, 0x10FF), (0x1100, 0x11FF),
    (0x1E00, 0x1EFF), (0x2000, 0x206F), (0x20A0, 0x20CF), (0x2100, 0x214F), (0x2190, 0x22FF),
    (0x2500, 0x257F), (0x2600, 0x26FF), (0x3000, 0x303F), (0x3040, 0x30FF), (0x4E00, 0x9FFF),
    (0xAC00, 0xD7A3), (0xFF00, 0xFFEF), (0x1F300, 0x1F64F), (0x1F900, 0x1F9FF), (0x1D400, 0x1D7FF),
    (0x0300, 0x036F), (0x10000, 0x1007F), (0x20000, 0x2A6DF),
]


def assigned(c):
    return unicodedata.category(c) not in ("Cn", "Cs")


def random_strings(rng, count):
    out = []
    words = [w for s in LANGUAGES for w in s.split()]
    for _ in range(count):
        kind = rng.random()
        if kind < 0.4:
            lo, hi = rng.choice(RANGES)
            n = rng.randint(1, 24)
            chars = []
            while len(chars) < n:
                c = chr(rng.randint(lo, hi))
                if assigned(c):
                    chars.append(c)
            out.append("".join(chars))
        elif kind < 0.7:
            parts = []
            for _ in range(rng.randint(1, 12)):
                r = rng.random()
                if r < 0.5:
                    parts.append(rng.choice(words))
                elif r < 0.7:
                    parts.append(rng.choice([" ", "  ", "\n", "\t", "\n\n", " \n", "\r\n"]))
                elif r < 0.85:
                    parts.append(str(rng.randint(0, 10 ** rng.randint(1, 9))))
                else:
                    parts.append(rng.choice(EMOJI + CONTRACTIONS[:20] + [".", ",", "!", "?", "'", '"', "-", "..."]))
            out.append("".join(parts))
        else:
            n = rng.randint(1, 40)
            chars = []
            while len(chars) < n:
                lo, hi = rng.choice(RANGES)
                c = chr(rng.randint(lo, hi))
                if assigned(c):
                    chars.append(c)
                if rng.random() < 0.2:
                    chars.append(rng.choice([" ", "\n", "'", "0", "a", "\u200d"]))
            out.append("".join(chars))
    return out


def source_lines(limit):
    files = [
        "lib/Tokenizer/Bpe.cpp", "lib/Tokenizer/Regex.cpp", "lib/Passes/PlaceBarriers.cpp",
        "lib/Runtime/cuda/StreamWorker.cu", "CMakeLists.txt", "scripts/bootstrap.sh",
        "bench/run_bench.py", "models/llama32-1b.graph", "docs/PERFORMANCE.md", "README.md",
    ]
    lines = []
    for name in files:
        path = os.path.join(ROOT, name)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read().split("\n")
        step = max(1, len(text) // (limit // len(files)))
        chunk = []
        for i in range(0, len(text), step):
            piece = "\n".join(text[i:i + 3])
            if piece.strip():
                chunk.append(piece)
        lines += chunk[: limit // len(files)]
    return lines


def main():
    rng = random.Random(20261204)
    corpus = []
    for group in (LANGUAGES, EMOJI, NUMBERS, CODE_EXTRA, WHITESPACE, CONTRACTIONS, SPECIALS, UNUSUAL, LONG):
        corpus += group
    # Every language sentence also in upper case and with a leading space.
    corpus += [s.upper() for s in LANGUAGES] + [" " + s for s in LANGUAGES]
    corpus += source_lines(250)
    corpus += random_strings(rng, 400)
    seen = set()
    unique = []
    for s in corpus:
        if s and s not in seen:
            seen.add(s)
            unique.append(s)
    json.dump(unique, sys.stdout, ensure_ascii=False, indent=0)
    sys.stdout.write("\n")
    print(f"{len(unique)} strings", file=sys.stderr)


if __name__ == "__main__":
    main()
