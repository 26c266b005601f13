// libFuzzer target: any bytes as a client's stdin, through framing, JSON-RPC
// parsing and the server's dispatch (analysis runs inline). Must never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "lsp/framing.hpp"
#include "lsp/server.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace oomlens::lsp;
  ServerIo io;
  io.send = [](const nlohmann::json& m) { (void)serialize(m); };
  io.run_in_background = [](std::function<void()> job) { job(); };
  io.run_on_protocol = [](std::function<void()> job) { job(); };
  io.log = [](std::string_view) {};
  Server server(io);
  // A valid initialize first, so the fuzzer reaches the handlers behind it.
  server.on_message(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}})");
  FrameReader frames;
  frames.feed(std::string_view(reinterpret_cast<const char*>(data), size));
  for (;;) {
    FrameEvent event = frames.next();
    if (std::holds_alternative<NeedMoreBytes>(event)) break;
    if (const auto* m = std::get_if<FramedMessage>(&event)) server.on_message(m->body);
  }
  (void)frames.at_eof();
  server.on_input_end();
  return 0;
}
