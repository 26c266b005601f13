-- A real editor as the client: Neovim's built-in LSP client (Debian neovim
-- 0.7.2) drives `oomlens lsp` on a fixture log and a training script. Run by neovim_test.sh:
--
--   OOMLENS=build/oomlens OOMLENS_LOG=/tmp/x/train.log \
--     nvim --headless -u NONE -i NONE -n -c 'luafile tests/editors/neovim_lsp_test.lua'
--
-- Prints one JSON summary line (what Neovim received) and exits 0 when every
-- check passed, 1 otherwise.
local summary = { client = 'neovim ' .. tostring(vim.version().major) .. '.' .. tostring(vim.version().minor)
                    .. '.' .. tostring(vim.version().patch), failures = {} }

local function fail(what)
  table.insert(summary.failures, what)
end

local function finish()
  summary.ok = #summary.failures == 0
  io.stdout:write(vim.fn.json_encode(summary) .. '\n')
  io.stdout:flush()
  -- :cquit exits with status 1 without asking anything.
  vim.cmd(summary.ok and 'qall!' or 'cquit!')
end

local ok, err = pcall(function()
  local oomlens = assert(os.getenv('OOMLENS'), 'OOMLENS is not set')
  local log = assert(os.getenv('OOMLENS_LOG'), 'OOMLENS_LOG is not set')

  local exit_code
  local client_id = vim.lsp.start_client({
    name = 'oomlens',
    cmd = { oomlens, 'lsp' },
    root_dir = vim.fn.fnamemodify(log, ':h'),
    on_exit = function(code) exit_code = code end,
  })
  if not client_id then
    fail('vim.lsp.start_client returned nil')
    return
  end

  vim.cmd('edit ' .. vim.fn.fnameescape(log))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(bufnr, client_id)

  local function oom_diagnostics()
    local found = {}
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      local lsp = (d.user_data or {}).lsp or {}
      local code = d.code or lsp.code
      if code == 'OOM101' then
        table.insert(found, { code = code, lnum = d.lnum, col = d.col, end_col = d.end_col, severity = d.severity,
                              message = d.message, source = d.source, lsp = lsp })
      end
    end
    return found
  end

  -- 1. Diagnostics arrive by push (0.7 has no pull support).
  if not vim.wait(10000, function() return #oom_diagnostics() > 0 end, 50) then
    fail('no OOM101 diagnostic within 10 s')
    return
  end
  local diags = oom_diagnostics()
  local d = diags[1]
  summary.diagnostics = {}
  for _, x in ipairs(diags) do
    table.insert(summary.diagnostics, { code = x.code, lnum = x.lnum, severity = x.severity, message = x.message })
  end
  if #diags ~= 1 then fail('expected one OOM101 diagnostic, got ' .. #diags) end
  -- Line 31 of the fixture (grep -n) is lnum 30; an OOM is an error.
  if d.lnum ~= 30 then fail('OOM101 on lnum ' .. tostring(d.lnum) .. ', expected 30') end
  if d.severity ~= vim.diagnostic.severity.ERROR then fail('OOM101 is not an error') end
  if not d.message:find('30.14 GiB', 1, true) then fail('message lacks the numbers: ' .. d.message) end

  local uri = vim.uri_from_bufnr(bufnr)
  local range = { start = { line = d.lnum, character = 0 }, ['end'] = { line = d.lnum, character = 0 } }

  -- 2. Code actions for the diagnostic, as Neovim's own client asks for them.
  local context = { diagnostics = { d.lsp } }
  if d.lsp.range == nil then context.diagnostics = {} end
  local responses = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction',
    { textDocument = { uri = uri }, range = range, context = context }, 5000)
  summary.code_actions = {}
  for _, response in pairs(responses or {}) do
    if response.error then fail('codeAction error: ' .. vim.inspect(response.error)) end
    for _, action in ipairs(response.result or {}) do
      table.insert(summary.code_actions, action.title)
    end
  end
  local wanted = 'Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True for train.py'
  if not vim.tbl_contains(summary.code_actions, wanted) then
    fail('no code action titled "' .. wanted .. '"')
  end
  if not vim.tbl_contains(summary.code_actions, 'Run the verification command') then
    fail('no "Run the verification command" action')
  end

  -- 3. Hover on the OOM line.
  local hovers = vim.lsp.buf_request_sync(bufnr, 'textDocument/hover',
    { textDocument = { uri = uri }, position = { line = d.lnum, character = 5 } }, 5000)
  summary.hover = false
  for _, response in pairs(hovers or {}) do
    local contents = response.result and response.result.contents
    if contents and contents.kind == 'markdown' and contents.value:find('### OOM101', 1, true) then
      summary.hover = true
    end
  end
  if not summary.hover then fail('no Markdown hover with OOM101 on the OOM line') end

  -- 4. Edits go to the server incrementally; diagnostics follow. A line of
  -- non-ASCII text above the OOM moves it down by one.
  vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { 'Größe 数据集 🚀 ö' })
  if not vim.wait(10000, function()
    local now = oom_diagnostics()
    return #now == 1 and now[1].lnum == 31
  end, 50) then
    fail('the diagnostic did not move to lnum 31 after a line was inserted above it')
  end
  -- Replacing the message on its line removes the diagnostic. (Breaking a
  -- word of it is not enough: what remains of an allocator message, like a
  -- selection of part of one, is still read as an OOM with its numbers.)
  local line = vim.api.nvim_buf_get_lines(bufnr, 31, 32, false)[1]
  vim.api.nvim_buf_set_text(bufnr, 31, 0, 31, #line, { 'training stopped by the user' })
  if not vim.wait(10000, function() return #oom_diagnostics() == 0 end, 50) then
    fail('the diagnostic stayed after the OOM message was edited away')
  end
  -- Undo brings it back (Neovim may undo both API edits as one step):
  -- on the buffer line that holds the OOM message again.
  vim.cmd('silent undo')
  local oom_lnum
  for i, text in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if text:find('torch.OutOfMemoryError: CUDA out of memory', 1, true) then oom_lnum = i - 1 end
  end
  if not vim.wait(10000, function()
    local now = oom_diagnostics()
    return oom_lnum ~= nil and #now == 1 and now[1].lnum == oom_lnum
  end, 50) then
    fail('the diagnostic did not come back after undo (OOM on lnum ' .. tostring(oom_lnum) .. ')')
  end
  summary.after_edits = vim.tbl_map(function(x) return x.lnum end, oom_diagnostics())

  -- 5. A training script: OOM301 arrives, its quick fix is a versioned
  -- workspace edit that Neovim applies, and the buffer then equals the
  -- fixture's .fixed.py; the diagnostic goes away.
  local script = assert(os.getenv('OOMLENS_SCRIPT'), 'OOMLENS_SCRIPT is not set')
  local fixed = vim.fn.readfile(assert(os.getenv('OOMLENS_SCRIPT_FIXED'), 'OOMLENS_SCRIPT_FIXED is not set'))
  vim.cmd('edit ' .. vim.fn.fnameescape(script))
  local pybuf = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(pybuf, client_id)
  local function script_diagnostics()
    local found = {}
    for _, x in ipairs(vim.diagnostic.get(pybuf)) do
      local lsp = (x.user_data or {}).lsp or {}
      if (x.code or lsp.code) == 'OOM301' then table.insert(found, x) end
    end
    return found
  end
  if not vim.wait(10000, function() return #script_diagnostics() == 1 end, 50) then
    fail('no OOM301 diagnostic on the script within 10 s')
  else
    local sd = script_diagnostics()[1]
    summary.script_diagnostic = { lnum = sd.lnum, col = sd.col, message = sd.message }
    local sresponses = vim.lsp.buf_request_sync(pybuf, 'textDocument/codeAction', {
      textDocument = { uri = vim.uri_from_bufnr(pybuf) },
      range = { start = { line = sd.lnum, character = sd.col }, ['end'] = { line = sd.lnum, character = sd.col } },
      context = { diagnostics = { sd.user_data.lsp } },
    }, 5000)
    local applied = false
    for _, response in pairs(sresponses or {}) do
      for _, action in ipairs(response.result or {}) do
        if action.kind == 'quickfix' then
          -- Neovim declares resolveSupport for `edit`: the server leaves it
          -- out, and the client resolves it before applying, as here.
          if not action.edit then
            local resolved = vim.lsp.buf_request_sync(pybuf, 'codeAction/resolve', action, 5000)
            for _, r in pairs(resolved or {}) do
              if r.error then fail('codeAction/resolve error: ' .. vim.inspect(r.error)) end
              if r.result then action = r.result end
            end
          end
          if action.edit then
            summary.script_fix = action.title
            vim.lsp.util.apply_workspace_edit(action.edit, 'utf-16')
            applied = true
          end
        end
      end
    end
    if not applied then fail('no quick fix with an edit for OOM301') end
    if not vim.deep_equal(vim.api.nvim_buf_get_lines(pybuf, 0, -1, false), fixed) then
      fail('the fixed buffer differs from the .fixed.py fixture')
    end
    if not vim.wait(10000, function() return #script_diagnostics() == 0 end, 50) then
      fail('OOM301 stayed after its fix was applied')
    end
  end

  -- 6. Shutdown and exit as Neovim does it: the server exits with 0.
  vim.lsp.stop_client(client_id)
  if not vim.wait(5000, function() return exit_code ~= nil end, 50) then
    fail('the server did not exit after shutdown/exit')
  elseif exit_code ~= 0 then
    fail('the server exited with ' .. tostring(exit_code) .. ' after shutdown/exit')
  end
  summary.server_exit_code = exit_code
end)

if not ok then fail('error in the test script: ' .. tostring(err)) end
finish()
