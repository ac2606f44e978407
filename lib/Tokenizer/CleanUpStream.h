//===- CleanUpStream.h - The space clean-up of text that arrives in pieces -*- C++ -*-===//
//
// clean_up_tokenization_spaces replaces ten patterns, one after another, each
// over the whole text (CleanUp.h). A stream that prints text as it comes must
// print exactly what that does to the whole, so it holds back the tail that a
// later piece could still change, and prints the rest cleaned.
//
// Where to cut is decided, not guessed: the text before a cut can be cleaned
// alone when, at every stage, no occurrence of that stage's pattern can begin
// before the cut and end after it (one that overlaps an occurrence already
// replaced is skipped by the scan). Two facts make that checkable: every
// clean-up only removes spaces (so the text after the cut, cleaned, begins
// with a space of its leading run or with its first other character), and a
// run of spaces loses at most its last two (" ' " then one of " 's", " 'm",
// " 've", " 're"), so a run of three or more keeps its first. The check may
// hold back more than it must, never less.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_TOKENIZER_CLEANUPSTREAM_H
#define TI_LIB_TOKENIZER_CLEANUPSTREAM_H

#include <string>

namespace ti::tok {

/// Takes from the front of `held` the longest text that the check shows no
/// later text can change once cleaned, and returns it cleaned; the rest stays in `held` (at
/// the end of the stream, clean it with cleanUpSpaces).
std::string takeSettled(std::string &held);

} // namespace ti::tok

#endif // TI_LIB_TOKENIZER_CLEANUPSTREAM_H
