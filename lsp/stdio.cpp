// The stdio runner: a reader thread frames standard input, the protocol runs
// on an Asio io_context, analyses on a worker pool; only the protocol thread
// writes to standard output.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <iostream>
#include <sys/uio.h>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "analyzer/log/warm_up.hpp"
#include "lsp/framing.hpp"
#include "lsp/server.hpp"

namespace oomlens::lsp {
namespace {

// Writes a header and a body with as few system calls as the pipe allows.
// False when the client is gone (EPIPE): then there is no one to serve.
bool write_all(int fd, std::string_view header, std::string_view body) {
  while (!header.empty() || !body.empty()) {
    iovec parts[2] = {{const_cast<char*>(header.data()), header.size()}, {const_cast<char*>(body.data()), body.size()}};
    ssize_t n = header.empty() ? ::write(fd, body.data(), body.size()) : ::writev(fd, parts, 2);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    auto written = static_cast<std::size_t>(n);
    std::size_t from_header = std::min(written, header.size());
    header.remove_prefix(from_header);
    body.remove_prefix(written - from_header);
  }
  return true;
}

// Read a large body up to this much at a time (and ask for a pipe this large).
constexpr int kReadBytes = 1 << 20;
// Anything else (headers, small messages, the start of a large one) this much.
constexpr std::size_t kChunkBytes = 64 * 1024;

}  // namespace

int run_stdio_server() {
  std::signal(SIGPIPE, SIG_IGN);
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  boost::asio::thread_pool workers(1);  // one analysis at a time: the machine's other core stays with the editor
  bool output_broken = false;

  ServerIo server_io;
  std::string body;  // reused: no allocation per message once it has grown
  server_io.send = [&](const nlohmann::json& message) {
    if (output_broken) return;
    body.clear();
    serialize_to(message, body);
    char header[48];
    auto end = fmt::format_to_n(header, sizeof header, "Content-Length: {}\r\n\r\n", body.size()).out;
    if (!write_all(STDOUT_FILENO, std::string_view(header, static_cast<std::size_t>(end - header)), body))
      output_broken = true;
    // A huge reply (diagnoseText of a large selection) does not keep its room.
    if (body.capacity() > (4u << 20)) std::string().swap(body);
  };
  server_io.run_in_background = [&](std::function<void()> job) { boost::asio::post(workers, std::move(job)); };
  server_io.run_on_protocol = [&](std::function<void()> job) { boost::asio::post(io, std::move(job)); };
  server_io.log = [](std::string_view text) { std::cerr << "oomlens lsp: " << text << "\n"; };
  Server server(server_io);
  // The first log the editor opens should not pay for the parsers' first use
  // (compiling their patterns, building their automata): that is done here,
  // beside the first messages. Detached: the process ends with _Exit below,
  // which runs no destructors under it.
  std::thread(analyzer::warm_up).detach();

#ifdef F_SETPIPE_SZ
  // A larger pipe (the default holds 64 KiB) lets a client hand over a large
  // document in fewer, larger writes and reads. Only a hint: it fails for a
  // file or terminal, or above /proc/sys/fs/pipe-max-size.
  ::fcntl(STDIN_FILENO, F_SETPIPE_SZ, kReadBytes);
#endif

  std::thread reader([&] {
    // Large bodies are read straight into an IncrementalMessage, which
    // unescapes a document's text while the rest of it is still arriving.
    FrameReader frames({}, [](std::size_t length) { return std::make_unique<IncrementalMessage>(length); });
    std::string chunk(kChunkBytes, '\0');
    for (;;) {
      std::span<char> direct = frames.direct_space(kReadBytes);
      char* into = direct.empty() ? chunk.data() : direct.data();
      std::size_t room = direct.empty() ? chunk.size() : direct.size();
      ssize_t n = ::read(STDIN_FILENO, into, room);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      if (!direct.empty()) {
        frames.commit_direct(static_cast<std::size_t>(n));
      } else {
        frames.feed(std::string_view(chunk.data(), static_cast<std::size_t>(n)));
      }
      for (;;) {
        FrameEvent event = frames.next();
        if (std::holds_alternative<NeedMoreBytes>(event)) break;
        boost::asio::post(io, [&server, event = std::move(event)]() mutable {
          if (auto* m = std::get_if<FramedMessage>(&event)) {
            if (m->sink)
              server.on_message(static_cast<IncrementalMessage&>(*m->sink));
            else
              server.on_message(m->body);
          } else if (const auto* e = std::get_if<FramingError>(&event)) {
            server.on_framing_error(e->description, e->skipped_request_id);
          }
        });
      }
    }
    auto truncated = frames.at_eof();
    boost::asio::post(io, [&server, truncated] {
      if (truncated) server.on_framing_error(truncated->description);
      server.on_input_end();
    });
  });

  while (!server.finished() && !output_broken && io.run_one() > 0) {
  }
  int status = server.exit_code();
  std::fflush(stdout);
  std::cerr.flush();
  // The reader may be blocked in read() on a stdin the client keeps open
  // after "exit", and an analysis may still run: end the process here rather
  // than wait for either.
  reader.detach();
  std::_Exit(status);
}

}  // namespace oomlens::lsp
