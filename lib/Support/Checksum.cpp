//===- Checksum.cpp - XXH3-64, from the xxHash library's header ------------===//
#include "ti/Support/Checksum.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <new>

using namespace ti;

struct Checksum::State {
  XXH3_state_t xxh;
};

Checksum::Checksum() : state(new State) {
  if (XXH3_64bits_reset(&state->xxh) != XXH_OK)
    throw std::bad_alloc(); // Cannot fail for a state of our own.
}

Checksum::~Checksum() = default;

Checksum &Checksum::update(const void *data, size_t bytes) {
  XXH3_64bits_update(&state->xxh, data, bytes);
  return *this;
}

uint64_t Checksum::value() const { return XXH3_64bits_digest(&state->xxh); }

uint64_t ti::checksum(const void *data, size_t bytes) { return XXH3_64bits(data, bytes); }
