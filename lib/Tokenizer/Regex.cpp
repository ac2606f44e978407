//===- Regex.cpp - The tokenizer files' regular expressions on PCRE2 ------===//
#define PCRE2_CODE_UNIT_WIDTH 8
#include "Regex.h"

#include "ti/Tokenizer/Utf8.h"

#include <pcre2.h>

#include <cctype>
#include <vector>

namespace ti::tok {

namespace {

bool isAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

Status unsupported(std::string_view pattern, std::size_t at, std::string_view what) {
  return Status::error("regular expression '" + std::string(pattern) + "': " + std::string(what) +
                       " at offset " + std::to_string(at) + " is not supported");
}

} // namespace

StatusOr<std::string> onigurumaToPcre2(std::string_view p) {
  std::string out;
  // One entry per open group: whether ASCII letters in it fold case.
  std::vector<bool> folds;
  bool inClass = false;
  auto folding = [&] { return !folds.empty() && folds.back(); };
  for (std::size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\') {
      if (i + 1 >= p.size()) return unsupported(p, i, "a trailing backslash");
      char e = p[++i];
      switch (e) {
      case 's': out += "\\p{White_Space}"; break;
      case 'S': out += "\\P{White_Space}"; break;
      case 'd': out += "\\p{Nd}"; break;
      case 'D': out += "\\P{Nd}"; break;
      case 'v': out += "\\x{0B}"; break;
      case 'r': case 'n': case 't': case 'f': case 'e': case 'a':
        out += '\\';
        out += e;
        break;
      case 'p': case 'P': case 'x': {
        // \p{Name}, \x{HEX} or \xHH: copied as they are (PCRE2 reads them alike).
        std::size_t end = i + 1;
        if (end < p.size() && p[end] == '{') {
          end = p.find('}', end);
          if (end == std::string_view::npos) return unsupported(p, i - 1, "an unterminated \\" + std::string(1, e) + "{");
          ++end;
        } else if (e == 'x') {
          while (end < p.size() && end < i + 3 && std::isxdigit(static_cast<unsigned char>(p[end]))) ++end;
        } else {
          return unsupported(p, i - 1, "a one-letter property escape");
        }
        out += '\\';
        out.append(p.substr(i, end - i));
        i = end - 1;
        break;
      }
      case 'u': {
        if (i + 4 >= p.size()) return unsupported(p, i - 1, "a short \\u escape");
        std::string hex(p.substr(i + 1, 4));
        for (char h : hex)
          if (!std::isxdigit(static_cast<unsigned char>(h))) return unsupported(p, i - 1, "a short \\u escape");
        out += "\\x{" + hex + "}";
        i += 4;
        break;
      }
      default:
        if (std::isalnum(static_cast<unsigned char>(e)))
          return unsupported(p, i - 1, std::string("the escape \\") + e);
        out += '\\';
        out += e; // an escaped punctuation character stands for itself
      }
      continue;
    }
    if (inClass) {
      if (c == ']') inClass = false;
      else if (c == '[') return unsupported(p, i, "a nested character class");
      else if (c == '&' && i + 1 < p.size() && p[i + 1] == '&') return unsupported(p, i, "a class intersection");
      else if (folding() && isAsciiLetter(c)) return unsupported(p, i, "a letter in a class inside (?i:...)");
      out += c;
      continue;
    }
    switch (c) {
    case '[':
      inClass = true;
      out += c;
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += "\\]", ++i; // a leading ] is literal
      break;
    case '(':
      if (p.substr(i, 4) == "(?i:") {
        folds.push_back(true);
        out += "(?:";
        i += 3;
      } else if (p.substr(i, 3) == "(?:" || p.substr(i, 3) == "(?=" || p.substr(i, 3) == "(?!") {
        folds.push_back(folding());
        out.append(p.substr(i, 3));
        i += 2;
      } else if (p.substr(i, 4) == "(?<=" || p.substr(i, 4) == "(?<!") {
        folds.push_back(folding());
        out.append(p.substr(i, 4));
        i += 3;
      } else if (p.substr(i, 2) == "(?") {
        return unsupported(p, i, "the group form (?" + std::string(p.substr(i + 2, 1)));
      } else {
        folds.push_back(folding());
        out += c;
      }
      break;
    case ')':
      if (folds.empty()) return unsupported(p, i, "an unbalanced )");
      folds.pop_back();
      out += c;
      break;
    case '.': out += "[^\\n]"; break;
    case '^': case '$': return unsupported(p, i, "an anchor");
    default:
      if (folding() && isAsciiLetter(c)) {
        out += '[';
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        out += ']';
      } else {
        out += c;
      }
    }
  }
  if (inClass) return unsupported(p, p.size(), "an unterminated class");
  if (!folds.empty()) return unsupported(p, p.size(), "an unterminated group");
  return out;
}

std::string Regex::literal(std::string_view text) {
  // \Q...\E quotes everything but \E itself: each \E in the text closes the
  // quote, is written escaped, and opens it again.
  std::string out = "\\Q";
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == 'E') {
      out += "\\E\\\\E\\Q";
      ++i;
    } else {
      out += text[i];
    }
  }
  return out + "\\E";
}

struct Regex::Code {
  pcre2_code *code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

StatusOr<Regex> Regex::compile(const std::string &pattern) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  const std::string &source = pattern;
  pcre2_code *code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(source.data()), source.size(),
                                   PCRE2_UTF | PCRE2_NO_UTF_CHECK, &error, &offset, nullptr);
  if (!code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    return Status::error("regular expression '" + pattern + "': " +
                         reinterpret_cast<const char *>(message) + " at offset " + std::to_string(offset));
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE); // the interpreter remains if JIT is not available
  Regex regex;
  auto holder = std::make_shared<Code>();
  holder->code = code;
  regex.code = std::move(holder);
  return regex;
}

Status Regex::forEachMatch(std::string_view text,
                           const std::function<void(std::size_t, std::size_t)> &onMatch) const {
  pcre2_match_data *data = pcre2_match_data_create_from_pattern(code->code, nullptr);
  if (!data) return Status::error("out of memory for a regular-expression match");
  Status status;
  std::size_t at = 0;
  while (at <= text.size()) {
    int rc = pcre2_match(code->code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), at,
                         PCRE2_NO_UTF_CHECK, data, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(rc, message, sizeof message);
      status = Status::error(std::string("regular-expression match failed: ") +
                             reinterpret_cast<const char *>(message));
      break;
    }
    PCRE2_SIZE *ovector = pcre2_get_ovector_pointer(data);
    std::size_t begin = ovector[0], end = ovector[1];
    onMatch(begin, end);
    if (end > begin) {
      at = end;
    } else {
      if (end >= text.size()) break;
      std::size_t n = utf8::validSequenceLength(text, end);
      at = end + (n == 0 ? 1 : n);
    }
  }
  pcre2_match_data_free(data);
  return status;
}

StatusOr<std::string> Regex::replaceAll(std::string_view text, std::string_view content) const {
  std::string out;
  std::size_t last = 0;
  Status s = forEachMatch(text, [&](std::size_t begin, std::size_t end) {
    out.append(text.substr(last, begin - last));
    out += content;
    last = end;
  });
  if (!s) return s;
  out.append(text.substr(last));
  return out;
}

} // namespace ti::tok
