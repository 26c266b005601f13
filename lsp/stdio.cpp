// The stdio runner: a reader thread frames standard input, the protocol runs
// on an Asio io_context, analyses on a worker pool; only the protocol thread
// writes to standard output.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <thread>
#include <unistd.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

#include "lsp/framing.hpp"
#include "lsp/server.hpp"

namespace oomlens::lsp {
namespace {

// False when the client is gone (EPIPE): then there is no one to serve.
bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

int run_stdio_server() {
  std::signal(SIGPIPE, SIG_IGN);
  boost::asio::io_context io;
  auto work = boost::asio::make_work_guard(io);
  boost::asio::thread_pool workers(1);  // one analysis at a time: the machine's other core stays with the editor
  bool output_broken = false;

  ServerIo server_io;
  server_io.send = [&](const nlohmann::json& message) {
    if (output_broken) return;
    if (!write_all(STDOUT_FILENO, frame(serialize(message)))) output_broken = true;
  };
  server_io.run_in_background = [&](std::function<void()> job) { boost::asio::post(workers, std::move(job)); };
  server_io.run_on_protocol = [&](std::function<void()> job) { boost::asio::post(io, std::move(job)); };
  server_io.log = [](std::string_view text) { std::cerr << "oomlens lsp: " << text << "\n"; };
  Server server(server_io);

  std::thread reader([&] {
    FrameReader frames;
    std::string chunk(1 << 16, '\0');
    for (;;) {
      ssize_t n = ::read(STDIN_FILENO, chunk.data(), chunk.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      frames.feed(std::string_view(chunk.data(), static_cast<std::size_t>(n)));
      for (;;) {
        FrameEvent event = frames.next();
        if (std::holds_alternative<NeedMoreBytes>(event)) break;
        boost::asio::post(io, [&server, event = std::move(event)] {
          if (const auto* m = std::get_if<FramedMessage>(&event)) server.on_message(m->body);
          else if (const auto* e = std::get_if<FramingError>(&event)) server.on_framing_error(e->description);
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
