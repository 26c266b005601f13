#include <catch2/catch.hpp>

#include <string>

#include "analyzer/python/script.hpp"

using namespace oomlens::analyzer::python;

namespace {

// The source with "<HERE>" spliced in at the insertion point.
std::string mark(std::string_view source) {
  Script s = parse_script(source);
  InsertionPoint at = s.insertion_point();
  std::string out(source);
  out.insert(at.byte, at.needs_newline ? "\n<HERE>" : "<HERE>");
  return out;
}

}  // namespace

TEST_CASE("python layout: insertion point with nothing to skip") {
  CHECK(mark("") == "<HERE>");
  CHECK(mark("import torch\n") == "<HERE>import torch\n");
  CHECK(mark("# licence header\nimport torch\n") == "<HERE># licence header\nimport torch\n");
  Script s = parse_script("import torch\n");
  CHECK(s.insertion_point().position == Point{1, 1, 1});
}

TEST_CASE("python layout: insertion point after shebang and encoding lines") {
  CHECK(mark("#!/usr/bin/env python3\nimport torch\n") == "#!/usr/bin/env python3\n<HERE>import torch\n");
  CHECK(mark("# -*- coding: utf-8 -*-\nimport torch\n") == "# -*- coding: utf-8 -*-\n<HERE>import torch\n");
  CHECK(mark("#!/usr/bin/python\n# vim: set fileencoding=latin-1 :\nx = 1\n") ==
        "#!/usr/bin/python\n# vim: set fileencoding=latin-1 :\n<HERE>x = 1\n");
  // An encoding line counts only on line 1 or 2, and line 2 only after a comment line.
  CHECK(mark("x = 1\n# coding: utf-8\n") == "<HERE>x = 1\n# coding: utf-8\n");
  CHECK(mark("#!/usr/bin/python\n\n# coding: utf-8\nx = 1\n") ==
        "#!/usr/bin/python\n<HERE>\n# coding: utf-8\nx = 1\n");
  CHECK(mark("#!/usr/bin/python") == "#!/usr/bin/python\n<HERE>");
  CHECK(parse_script("#!/usr/bin/python").insertion_point().needs_newline);
}

TEST_CASE("python layout: insertion point after the module docstring and __future__ imports") {
  CHECK(mark("\"\"\"Train.\n\nLong text.\n\"\"\"\nimport torch\n") ==
        "\"\"\"Train.\n\nLong text.\n\"\"\"\n<HERE>import torch\n");
  CHECK(mark("'''Doc.'''  # trailing comment\nimport torch\n") ==
        "'''Doc.'''  # trailing comment\n<HERE>import torch\n");
  CHECK(mark("\"\"\"Doc.\"\"\"\n\n# comment\nfrom __future__ import annotations\n"
             "from __future__ import (division,\n    print_function)\n\nimport torch\n") ==
        "\"\"\"Doc.\"\"\"\n\n# comment\nfrom __future__ import annotations\n"
        "from __future__ import (division,\n    print_function)\n<HERE>\nimport torch\n");
  CHECK(mark("from __future__ import annotations\nimport torch\n") ==
        "from __future__ import annotations\n<HERE>import torch\n");
  // f-strings and bytes are not docstrings.
  CHECK(mark("f'''not a doc'''\nimport torch\n") == "<HERE>f'''not a doc'''\nimport torch\n");
  CHECK(mark("b'not a doc'\nimport torch\n") == "<HERE>b'not a doc'\nimport torch\n");
  // A docstring made of implicitly concatenated parts is still one.
  CHECK(mark("'a' 'b'\nx = 1\n") == "'a' 'b'\n<HERE>x = 1\n");
  // Only the first statement can be the docstring.
  CHECK(mark("x = 1\n'not a doc'\n") == "<HERE>x = 1\n'not a doc'\n");
}

TEST_CASE("python layout: insertion point with everything at once, CRLF, BOM, no final newline") {
  CHECK(mark("#!/usr/bin/env python\r\n# coding=utf-8\r\n\"\"\"Doc.\"\"\"\r\n"
             "from __future__ import annotations\r\nimport torch\r\n") ==
        "#!/usr/bin/env python\r\n# coding=utf-8\r\n\"\"\"Doc.\"\"\"\r\n"
        "from __future__ import annotations\r\n<HERE>import torch\r\n");
  CHECK(mark("\xEF\xBB\xBFimport torch\n") == "\xEF\xBB\xBF<HERE>import torch\n");
  CHECK(mark("\xEF\xBB\xBF#!/usr/bin/python\nx = 1\n") == "\xEF\xBB\xBF#!/usr/bin/python\n<HERE>x = 1\n");
  CHECK(mark("\"\"\"Doc.\"\"\"") == "\"\"\"Doc.\"\"\"\n<HERE>");
  Script s = parse_script("#!/x\r\n\"\"\"D.\"\"\"\r\nimport torch\r\n");
  CHECK(s.line_ending() == "\r\n");
  CHECK(s.insertion_point().position.line == 3);
  CHECK(parse_script("x = 1\n").line_ending() == "\n");
  CHECK(parse_script("").line_ending() == "\n");
}
