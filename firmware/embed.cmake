# Turns the ROM binary into a C file defining nm_boot_rom() (cmake -P).
#   cmake -DIN=boot_rom.bin -DOUT=boot_rom.c -P embed.cmake
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" nhex)
math(EXPR len "${nhex} / 2")
if(NOT len EQUAL 65536)
  message(FATAL_ERROR "${IN}: the boot ROM must be 65536 bytes, not ${len}")
endif()
# "0xab," per byte, 16 a line (CMake regexes have no {n}: repeat by hand).
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REPEAT "0x[0-9a-f][0-9a-f]," 16 line)
string(REGEX REPLACE "(${line})" "\\1\n    " bytes "${bytes}")
file(WRITE "${OUT}.tmp"
"/* Generated from firmware/rom.S by firmware/embed.cmake: do not edit. */\n"
"#include <stddef.h>\n#include <stdint.h>\n\n"
"const uint8_t *nm_boot_rom(size_t *len);\n\n"
"static const uint8_t rom[${len}] = {\n    ${bytes}\n};\n\n"
"const uint8_t *nm_boot_rom(size_t *len)\n{\n    *len = sizeof rom;\n    return rom;\n}\n")
file(RENAME "${OUT}.tmp" "${OUT}")
