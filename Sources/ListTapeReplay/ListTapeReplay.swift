// ListTapeReplay module: sources arrive in the following commits.
