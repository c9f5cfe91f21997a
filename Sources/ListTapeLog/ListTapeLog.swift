// ListTapeLog module: sources arrive in the following commits.
