#!/usr/bin/env python3
"""Embeds a text file in the binary as a C++ string constant.

usage: embed_text.py INPUT OUTPUT.cpp QUALIFIED_NAME
Writes `extern const std::string_view NAME = R"...(...)...";` in NAME's
namespace; a raw string delimiter that does not occur in the text is chosen.
"""
import sys

source, output, qualified = sys.argv[1:4]
text = open(source, encoding="utf-8").read()
namespace, _, name = qualified.rpartition("::")
delimiter = "embedded"
while ")" + delimiter + '"' in text:
    delimiter += "_"
body = f'#include <string_view>\n\nnamespace {namespace} {{\nextern const std::string_view {name};\n' \
       f'const std::string_view {name} = R"{delimiter}({text}){delimiter}";\n}}\n'
with open(output, "w", encoding="utf-8") as f:
    f.write(body)
