"""Helpers shared by every test area (anything two areas need lives here, once).

- ``cli.run``: the CLI in this process, for behaviour (messages, exit codes, files);
- ``process.cli``: the CLI as a real process, for what is about the process (kills, pipes, start-up);
- ``fake_openai``: the OpenAI-compatible HTTP server on 127.0.0.1 (also runnable as a process);
- ``questions``: a question-writing model's valid answers, for that server and in-process fakes;
- ``reference.find_reference_data``: where the shared IR reference data is (behind the
  ``reference_data`` fixture).

Area-specific fakes and builders stay beside their tests.
"""
