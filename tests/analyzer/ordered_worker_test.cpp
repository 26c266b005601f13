#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/log/ordered_worker.hpp"

using oomlens::analyzer::OrderedWorker;

TEST_CASE("the worker handles items in the order they were pushed") {
  std::vector<int> seen;
  OrderedWorker<int> worker([&](int& i) { seen.push_back(i); }, 16);
  for (int i = 0; i < 10000; ++i) worker.push(i, 1);
  worker.finish();
  REQUIRE(seen.size() == 10000);
  for (int i = 0; i < 10000; ++i) CHECK(seen[static_cast<std::size_t>(i)] == i);
}

TEST_CASE("the producer waits while the queue is over its budget") {
  std::atomic<int> waiting{0}, most{0};
  std::atomic<bool> release{false};
  OrderedWorker<int> worker(
      [&](int&) {
        while (!release) {
        }
        --waiting;
      },
      4);
  // Weights of 2 against a budget of 4: at most two items queued or in hand.
  std::thread producer([&] {
    for (int i = 0; i < 20; ++i) {
      worker.push(i, 2);
      most = std::max(most.load(), ++waiting);
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(most.load() <= 2);
  release = true;
  producer.join();
  worker.finish();
  CHECK(waiting.load() == 0);
}

TEST_CASE("an item heavier than the budget still goes through") {
  int handled = 0;
  OrderedWorker<int> worker([&](int&) { ++handled; }, 4);
  worker.push(1, 100);
  worker.push(2, 100);
  worker.finish();
  CHECK(handled == 2);
}

TEST_CASE("the handler's exception comes back from finish, and later pushes fail") {
  OrderedWorker<int> worker(
      [](int& i) {
        if (i == 3) throw std::runtime_error("bad item 3");
      },
      1);
  bool threw = false;
  try {
    for (int i = 0; i < 1000; ++i) worker.push(i, 1);
  } catch (const std::runtime_error& e) {
    threw = std::string(e.what()) == "bad item 3";
  }
  CHECK(threw);  // 1000 items against a budget of 1: the failure is seen while pushing
  CHECK_THROWS_WITH(worker.finish(), "bad item 3");
}
