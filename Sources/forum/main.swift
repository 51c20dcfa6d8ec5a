import ForumCLI
