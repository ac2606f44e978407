//===- Tokenize.h - tirun tokenize / detokenize ------------------*- C++ -*-===//
#ifndef TI_TOOLS_TIRUN_TOKENIZE_H
#define TI_TOOLS_TIRUN_TOKENIZE_H

namespace ti::tirun {

/// tirun tokenize [weights.bin] [--tokenizer FILE]: text on standard input,
/// ids on standard output. argv[0] is "tokenize".
int runTokenize(int argc, char **argv);
/// tirun detokenize: ids (spaces, commas or newlines between) in, text out.
int runDetokenize(int argc, char **argv);

} // namespace ti::tirun

#endif // TI_TOOLS_TIRUN_TOKENIZE_H
