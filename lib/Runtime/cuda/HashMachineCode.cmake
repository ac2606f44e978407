# HashMachineCode.cmake - writes <STEM>MachineCode.h: a SHA-256 of every
# image of a CUDA worker that nvcc embedded in <STEM>.cu.o, as the array
# k<STEM>Images of MachineCodeImage.h's entries.
#
#   cmake -DKEEP_DIR=<nvcc --keep-dir> -DSTEM=Worker -DARCHITECTURES=86,90
#         -DOUTPUT=<header> -P HashMachineCode.cmake
#
# ARCHITECTURES is the object's CUDA_ARCHITECTURES, comma-separated. For each
# entry CMake gives nvcc --generate-code=arch=compute_N,code=[...]: "N" embeds
# the sm_N cubin and the compute_N PTX, "N-real" the cubin only, "N-virtual"
# the PTX only; nvcc --keep leaves them as STEM.compute_N.sm_N.cubin and
# STEM.compute_N.ptx (an "N-real" cubin as STEM.compute_N.cubin; STEM.sm_N.cubin
# and STEM.ptx when it builds one architecture). Only the images the object embeds are hashed, so a
# stale file of an architecture no longer built is never read.
#
# What is hashed is the machine code without its debug information:
# - a cubin (ELF): the ELF header's identification, type, machine, version
#   and flags (the arch), then, section by section in file order, the section
#   header without its file offset and the section's bytes, for every section
#   but the debug ones (.debug_*, .nv_debug_*, and their .rela*). Those hold
#   -lineinfo's line tables, which carry the source files' paths and
#   modification times: with them, touching a header or building in another
#   directory would change the hash without changing one instruction.
# - PTX: the text without its debug information, which it holds the same way
#   (.file and .loc lines, and the .section .debug_* blocks at its end).
#
# The header is rewritten only when its text changes: the executor, which
# includes it, then recompiles only when the machine code changed.
cmake_minimum_required(VERSION 3.25)
foreach(var KEEP_DIR STEM ARCHITECTURES OUTPUT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "HashMachineCode.cmake: -D${var}=... is required")
  endif()
endforeach()

# The little-endian unsigned number of `count` bytes at byte `at` of the hex
# string `hex` (two digits a byte), in decimal.
function(le_number hex at count out)
  set(digits "")
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last} 0 -1)
    math(EXPR pos "(${at} + ${i}) * 2")
    string(SUBSTRING "${hex}" ${pos} 2 byte)
    string(APPEND digits "${byte}")
  endforeach()
  math(EXPR value "0x${digits}" OUTPUT_FORMAT DECIMAL)
  set(${out} ${value} PARENT_SCOPE)
endfunction()

# The NUL-terminated string at byte `at` of the hex string `hex`.
function(c_string hex at out)
  string(LENGTH "${hex}" length)
  math(EXPR pos "${at} * 2")
  set(text "")
  while(pos LESS length)
    string(SUBSTRING "${hex}" ${pos} 2 byte)
    if(byte STREQUAL "00")
      break()
    endif()
    math(EXPR code "0x${byte}")
    string(ASCII ${code} char)
    string(APPEND text "${char}")
    math(EXPR pos "${pos} + 2")
  endwhile()
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# The SHA-256 of a cubin's code and data without its debug sections.
function(hash_cubin file out)
  file(READ "${file}" elf LIMIT 64 HEX)
  string(SUBSTRING "${elf}" 0 12 magic)
  if(NOT magic STREQUAL "7f454c460201")
    message(FATAL_ERROR "HashMachineCode.cmake: ${file} is not a 64-bit little-endian ELF file")
  endif()
  le_number("${elf}" 40 8 shoff)
  le_number("${elf}" 58 2 shentsize)
  le_number("${elf}" 60 2 shnum)
  le_number("${elf}" 62 2 shstrndx)
  # e_ident, e_type, e_machine, e_version; e_flags.
  string(SUBSTRING "${elf}" 0 48 ident)
  string(SUBSTRING "${elf}" 96 8 flags)
  set(digest "elf ${ident} ${flags}\n")
  math(EXPR table_bytes "${shnum} * ${shentsize}")
  file(READ "${file}" table OFFSET ${shoff} LIMIT ${table_bytes} HEX)
  math(EXPR at "${shstrndx} * ${shentsize}")
  le_number("${table}" ${at}+24 8 names_offset)
  le_number("${table}" ${at}+32 8 names_size)
  file(READ "${file}" names OFFSET ${names_offset} LIMIT ${names_size} HEX)
  math(EXPR last "${shnum} - 1")
  foreach(i RANGE 1 ${last})
    math(EXPR at "${i} * ${shentsize}")
    le_number("${table}" ${at} 4 name_at)
    c_string("${names}" ${name_at} name)
    if(name MATCHES "^\\.(rela?\\.)?(debug_|nv_debug_)")
      continue()
    endif()
    le_number("${table}" ${at}+4 4 type)
    le_number("${table}" ${at}+24 8 offset)
    le_number("${table}" ${at}+32 8 size)
    # The header without sh_offset (bytes 24-31), which moves with the debug
    # sections before it.
    math(EXPR head_pos "${at} * 2")
    math(EXPR tail_pos "(${at} + 32) * 2")
    math(EXPR tail_len "(${shentsize} - 32) * 2")
    string(SUBSTRING "${table}" ${head_pos} 48 head)
    string(SUBSTRING "${table}" ${tail_pos} ${tail_len} tail)
    set(content "")
    if(NOT type EQUAL 8 AND size GREATER 0) # SHT_NOBITS has no bytes in the file.
      file(READ "${file}" bytes OFFSET ${offset} LIMIT ${size} HEX)
      string(SHA256 content "${bytes}")
    endif()
    string(APPEND digest "${name} ${head} ${tail} ${content}\n")
  endforeach()
  string(SHA256 hash "${digest}")
  set(${out} ${hash} PARENT_SCOPE)
endfunction()

# The SHA-256 of PTX text without its debug information.
function(hash_ptx file out)
  file(READ "${file}" text)
  string(FIND "${text}" "\t.section\t.debug_" debug_at)
  if(debug_at GREATER -1)
    string(SUBSTRING "${text}" 0 ${debug_at} text)
  endif()
  string(REGEX REPLACE "\n[ \t]*\\.(file|loc)[ \t][^\n]*" "" text "${text}")
  string(SHA256 hash "${text}")
  set(${out} ${hash} PARENT_SCOPE)
endfunction()

string(REPLACE "," ";" archs "${ARCHITECTURES}")
list(LENGTH archs arch_count)
# With several architectures nvcc names its files STEM.compute_N.sm_N.cubin
# and STEM.compute_N.ptx; with one, STEM.sm_N.cubin and STEM.ptx.
if(arch_count EQUAL 1)
  set(infix "")
else()
  set(infix ".compute_@")
endif()
set(entries "")
foreach(arch IN LISTS archs)
  if(NOT arch MATCHES "^([0-9]+)([af]?)(-real|-virtual)?$")
    message(FATAL_ERROR "HashMachineCode.cmake: cannot hash CUDA architecture '${arch}': "
                        "name the architectures (86, 90-real, ...), not all or native")
  endif()
  set(number ${CMAKE_MATCH_1})
  set(name ${CMAKE_MATCH_1}${CMAKE_MATCH_2})
  set(kind "${CMAKE_MATCH_3}")
  set(images "")
  string(REPLACE "@" "${name}" at "${infix}")
  if(NOT kind STREQUAL "-virtual")
    if(kind STREQUAL "-real" AND arch_count GREATER 1)
      set(cubin "${KEEP_DIR}/${STEM}${at}.cubin")
    else()
      set(cubin "${KEEP_DIR}/${STEM}${at}.sm_${name}.cubin")
    endif()
    list(APPEND images "cubin|sm_${name}|${cubin}")
  endif()
  if(NOT kind STREQUAL "-real")
    list(APPEND images "ptx|compute_${name}|${KEEP_DIR}/${STEM}${at}.ptx")
  endif()
  foreach(image IN LISTS images)
    string(REPLACE "|" ";" image "${image}")
    list(GET image 0 type)
    list(GET image 1 label)
    list(GET image 2 file)
    if(NOT EXISTS "${file}")
      message(FATAL_ERROR "HashMachineCode.cmake: nvcc left no ${file} (is --keep on?)")
    endif()
    if(type STREQUAL "ptx")
      hash_ptx("${file}" hash)
      set(is_ptx true)
    else()
      hash_cubin("${file}" hash)
      set(is_ptx false)
    endif()
    string(APPEND entries "    {${number}, ${is_ptx}, \"${label}\", \"${hash}\"},\n")
  endforeach()
endforeach()

string(TOUPPER "${STEM}" guard)
set(text "//===- ${STEM}MachineCode.h - Generated by HashMachineCode.cmake: do not edit -===//
//
// A SHA-256 of each image of ${STEM}.cu.o in this build, the cubin of every
// real architecture and the PTX of every virtual one that nvcc embedded,
// without their debug information (HashMachineCode.cmake says exactly what is
// hashed). CudaExecutor::kernelFingerprint picks the image a device runs.
//
//===----------------------------------------------------------------------===//
#ifndef TI_LIB_RUNTIME_CUDA_${guard}MACHINECODE_H
#define TI_LIB_RUNTIME_CUDA_${guard}MACHINECODE_H

#include \"MachineCodeImage.h\"

namespace ti::cuda {

inline constexpr MachineCodeImage k${STEM}Images[] = {
${entries}};

} // namespace ti::cuda

#endif // TI_LIB_RUNTIME_CUDA_${guard}MACHINECODE_H
")
file(WRITE "${OUTPUT}.tmp" "${text}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
