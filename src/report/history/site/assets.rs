//! The site's style sheet and its one script (files of the site, allowed
//! by each page's policy as `'self'`; the pages read without them).

/// Added to the page's own style: the header, word diffs, search results,
/// focus, and narrow screens.
pub const SITE_CSS: &str = "\
header.site{display:flex;flex-wrap:wrap;gap:.4rem 1rem;align-items:center;justify-content:space-between;border-bottom:1px solid var(--line);padding:0 0 .5rem;margin:0 0 .8rem;font-size:.92rem}
nav.site a{white-space:nowrap}
form.search{display:flex;gap:.3rem}form.search input{font:inherit;padding:.2rem .5rem;width:16rem;max-width:60vw}
form.search button{font:inherit;padding:.2rem .6rem}
a{color:#0b57d0}a:visited{color:#6a3fb5}
a:focus-visible,summary:focus-visible,input:focus-visible,button:focus-visible{outline:3px solid #f29900;outline-offset:2px}
details.words{margin:.4rem 0}details.words summary{margin:.3rem 0}
p.hunk{background:var(--bg2);padding:.4rem .6rem;margin:.3rem 0;font-size:.9rem;overflow-wrap:anywhere}
del{background:#fdecea;color:#8e1b1b;text-decoration:line-through}ins{background:#e6f4ea;color:#0d5c2b;text-decoration:none;border-bottom:1px solid #17803d}
#results{margin:1rem 0}#results li{margin:.35rem 0}#results .kind{display:inline-block;min-width:4.5rem;color:var(--muted);font-size:.85rem}
#results .snip{display:block;color:var(--muted);font-size:.85rem;overflow-wrap:anywhere}#results mark{background:#fff3b0;color:inherit}
ul.names{column-width:20rem}
@media (max-width:40rem){body{margin:.6rem auto;padding:0 .6rem;font-size:14px}
table{display:block;overflow-x:auto;max-width:100%}
dl{grid-template-columns:1fr}dt{margin-top:.3rem}
h1{font-size:1.25rem}nav.toc{column-width:auto}
form.search{width:100%}form.search input{flex:1;width:auto;max-width:none}}
";

/// The script of every page: `/` puts the cursor in the search box; on a
/// text's page the text is unfolded; on the search page the index
/// (`search-index.js`, loaded before it) is searched as one types and for
/// the page's `?q=` or `#q=`. It reads nothing but the page and the index,
/// and asks for nothing: the page's policy allows no request anyway.
pub const SITE_JS: &str = r#"(function(){
'use strict';
var box=document.getElementById('q');
document.addEventListener('keydown',function(e){
  if(e.key==='/'&&box&&document.activeElement!==box&&!/^(INPUT|TEXTAREA)$/.test((document.activeElement||{}).tagName||'')){e.preventDefault();box.focus();}
});
var code=document.querySelectorAll('details.code');
if(code.length===1&&/\/i\/[^\/]+\/[^\/]+\/[^\/]+\.html$/.test(location.pathname)){code[0].open=true;}
var index=window.CC_SEARCH;
if(!index||!box){return;}
var lower=index.map(function(e){return [e[1].toLowerCase(),e[4].toLowerCase()];});
var out=document.createElement('div');
out.id='results';out.setAttribute('aria-live','polite');
var h1=document.querySelector('h1');
h1.parentNode.insertBefore(out,h1.nextSibling);
function el(tag,cls,text){var x=document.createElement(tag);if(cls){x.className=cls;}if(text!==undefined){x.textContent=text;}return x;}
function snippet(text,at,len){
  var s=Math.max(0,at-60),e=Math.min(text.length,at+len+60);
  var p=el('span','snip');
  p.appendChild(document.createTextNode((s>0?'…':'')+text.slice(s,at)));
  p.appendChild(el('mark','',text.slice(at,at+len)));
  p.appendChild(document.createTextNode(text.slice(at+len,e)+(e<text.length?'…':'')));
  return p;
}
function run(q){
  out.textContent='';
  var needle=q.trim().toLowerCase();
  if(!needle){out.appendChild(el('p','more','Type a name or a phrase.'));return;}
  var names=[],texts=[];
  for(var i=0;i<index.length;i++){
    if(lower[i][0].indexOf(needle)>=0){names.push([i,-1]);}
    else{var at=lower[i][1].indexOf(needle);if(at>=0){texts.push([i,at]);}}
  }
  names.sort(function(a,b){return (lower[a[0]][0]===needle?0:1)-(lower[b[0]][0]===needle?0:1);});
  var all=names.concat(texts);
  out.appendChild(el('p','',all.length+(all.length===1?' item':' items')+' ('+names.length+' by name, '+texts.length+' by text)'+(all.length>300?'; the first 300:':'')));
  var ul=el('ul','hits');
  all.slice(0,300).forEach(function(h){
    var e=index[h[0]],li=el('li');
    li.appendChild(el('span','kind',e[0]));
    var a=el('a');a.href=e[2];a.appendChild(el('code','',e[1]));li.appendChild(a);
    li.appendChild(el('span','more',' '+e[3]));
    if(h[1]>=0){li.appendChild(snippet(e[4],h[1],needle.length));}
    ul.appendChild(li);
  });
  out.appendChild(ul);
}
var q='';
var m=/[?&#]q=([^&]*)/.exec(location.search)||/[#&]q=([^&]*)/.exec(location.hash);
if(m){try{q=decodeURIComponent(m[1].replace(/\+/g,' '));}catch(e){q=m[1];}}
box.value=q;
var timer=null;
box.addEventListener('input',function(){clearTimeout(timer);timer=setTimeout(function(){run(box.value);},120);});
box.form.addEventListener('submit',function(e){e.preventDefault();run(box.value);});
run(q);
})();
"#;
