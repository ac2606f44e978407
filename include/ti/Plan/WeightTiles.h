//===- WeightTiles.h - Weight rows stored in octet tiles --------*- C++ -*-===//
//
// A tiled block of weights (WeightSegment::tiled; the tasks that stream it
// carry kFlagTiledWeights) stores its rows in octets: 8 consecutive rows of K
// columns as K/32 tiles of 8 rows x 32 columns, one after another along K;
// inside a tile the rows are row-major, row r's 32 columns the 64 bytes at
// r * 64. Element (r, c) of a block of K columns is element
//
//     (r / 8) * 8K + (c / 32) * 256 + (r % 8) * 32 + c % 32
//
// of the block (tiledElement).
//
// Why: the stream worker's consumers multiply a tile with one `mma.sync`
// (the tile as the 16 x 16 A operand; ops/TiledGemv.cuh), and lane l's part
// of a tile is the 16 bytes at l * 16: row l / 4's columns 8 (l % 4) .. + 8,
// one 16-byte shared-memory load a lane with no bank conflict. In row-major
// rows 4 KB apart, the 8 rows of an operand sit in the same banks.
//
// The stream of a tiled segment (Execution.h: streamSegment) is its octets
// in order, each cut into pieces of at most a stage (tiledPieceBytes): a
// piece never holds two octets, so that a consumer warp accumulates one
// octet's products in registers across the octet's pieces and writes its
// sums once, at the octet's last piece.
//
//===----------------------------------------------------------------------===//
#ifndef TI_PLAN_WEIGHTTILES_H
#define TI_PLAN_WEIGHTTILES_H

#include "ti/Support/HostDevice.h"

#include <cstdint>

namespace ti::plan {

constexpr uint32_t kTileRows = 8;   // An octet.
constexpr uint32_t kTileCols = 32;
constexpr uint32_t kTileBytes = kTileRows * kTileCols * 2; // bf16: 512.

/// Whether a block of `rows` x `cols` can be stored in octet tiles.
TI_HOST_DEVICE constexpr bool tileable(uint64_t rows, uint64_t cols) {
  return rows > 0 && cols > 0 && rows % kTileRows == 0 && cols % kTileCols == 0;
}

/// The element index of (row, col) in a tiled block of `cols` columns.
TI_HOST_DEVICE constexpr uint64_t tiledElement(uint64_t row, uint64_t col, uint64_t cols) {
  return (row / kTileRows) * kTileRows * cols + (col / kTileCols) * (kTileRows * kTileCols) +
         (row % kTileRows) * kTileCols + col % kTileCols;
}

/// The bytes of one octet of a block of rows of `rowBytes`.
TI_HOST_DEVICE constexpr uint32_t octetBytes(uint32_t rowBytes) { return kTileRows * rowBytes; }

/// The bytes of the piece that starts `offset` bytes into an octet of
/// `octet` bytes, in a ring of `stageBytes` stages (a multiple of
/// kTileBytes: the verifier checks): a whole stage's worth of tiles, or the
/// octet's rest.
TI_HOST_DEVICE constexpr uint32_t tiledPieceBytes(uint32_t octet, uint32_t offset,
                                                  uint32_t stageBytes) {
  return octet - offset < stageBytes ? octet - offset : stageBytes;
}

/// The pieces (ring stages) one octet of `octet` bytes fills.
TI_HOST_DEVICE constexpr uint32_t tiledPiecesPerOctet(uint32_t octet, uint32_t stageBytes) {
  return stageBytes == 0 ? 0 : (octet + stageBytes - 1) / stageBytes;
}

} // namespace ti::plan

#endif // TI_PLAN_WEIGHTTILES_H
