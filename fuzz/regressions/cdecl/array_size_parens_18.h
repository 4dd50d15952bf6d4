int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(int x[(
