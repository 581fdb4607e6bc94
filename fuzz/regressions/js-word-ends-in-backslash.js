x|==x}+chif/
\