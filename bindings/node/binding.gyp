# binding.gyp — the emqlite addon: src/emqlite_node.c over node_api.h, with
# the library's C sources compiled in. The source list and the header
# folders are found by scripts/sources.js (engine/ keeps moving files into
# family folders; nothing is listed by name here). remote/ (hiredis) is
# left out. Links the system SQLite; xxHash is used header-only. With
# EMQLITE_LIBDIR set (tests/node.sh's in-tree build), the addon compiles
# only src/emqlite_node.c and links the libemqlite found there instead.
{
  "targets": [
    {
      "target_name": "emqlite",
      "sources": [
        "src/emqlite_node.c",
        "<!@(node scripts/sources.js)"
      ],
      "include_dirs": [
        "<!@(node scripts/sources.js --include)"
      ],
      "defines": ["NAPI_VERSION=8", "_GNU_SOURCE", "_FILE_OFFSET_BITS=64"],
      "cflags_c": ["-std=c11", "-fvisibility=hidden", "-Wall", "-Wextra"],
      "cflags!": ["-fno-exceptions"],
      "libraries": [
        "<!@(node scripts/sources.js --libs)"
      ],
      "xcode_settings": {
        "OTHER_CFLAGS": ["-std=c11", "-fvisibility=hidden"]
      }
    }
  ]
}
